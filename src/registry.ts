/** An ordered, named registry whose changes are announced to connected clients. */

/** Entries in registration order, by name; `onChange` runs after every add and remove. */
export class Registry<T> {
  readonly #items = new Map<string, T>();
  #list: T[] | undefined;
  readonly #what: string;
  readonly #onChange: () => void;

  constructor(what: string, onChange: () => void) {
    this.#what = what;
    this.#onChange = onChange;
  }

  /** Adds an entry; a duplicate name is a programming error. Returns the remover. */
  add(name: string, item: T): () => void {
    if (this.#items.has(name)) throw new Error(`A ${this.#what} named "${name}" is already registered`);
    this.#items.set(name, item);
    this.#list = undefined;
    this.#onChange();
    return () => {
      if (this.#items.get(name) !== item) return;
      this.#items.delete(name);
      this.#list = undefined;
      this.#onChange();
    };
  }

  get(name: string): T | undefined {
    return this.#items.get(name);
  }

  get size(): number {
    return this.#items.size;
  }

  /** All entries in registration order (cached until the next change). */
  values(): readonly T[] {
    this.#list ??= [...this.#items.values()];
    return this.#list;
  }
}
