/** An index of many URI templates that finds the one serving a URI without trying them all. */
import { encodeUriText } from "./percent.js";
import type { UriTemplate, UriValues } from "./template.js";

/** A successful {@link TemplateRouter.match}. */
export interface TemplateMatch<V> {
  /** The value registered with the template. */
  readonly value: V;
  /** The decoded variables, as `template.match` returns them. */
  readonly params: UriValues;
  /** The template that matched. */
  readonly template: UriTemplate;
}

interface Entry<V> {
  readonly template: UriTemplate;
  readonly value: V;
  /** Precedence keys, most significant first (the literal prefix is the trie depth). */
  readonly literals: number;
  readonly wide: number;
  readonly variables: number;
  readonly order: number;
}

class Node<V> {
  /** The edge from the parent: a run of literal prefix characters. */
  label: string;
  parent: Node<V> | null;
  /** Created on the first child: most nodes are leaves. */
  children: Map<number, Node<V>> | null = null;
  /** Templates whose literal prefix ends exactly here, in precedence order. */
  readonly entries: Entry<V>[] = [];

  constructor(label: string, parent: Node<V> | null) {
    this.label = label;
    this.parent = parent;
  }
}

/**
 * Templates indexed by literal prefix (scheme included) in a radix trie: a match walks the trie along
 * the URI, then tries only the templates whose literal prefix the URI starts with, so its cost depends
 * on the URI and on how many templates share its prefixes, not on how many are registered.
 *
 * Precedence, the first rule that differs decides, and the first template (in that order) that
 * matches wins; `match` returns only that one:
 * 1. the longer literal prefix (the text before the first `{`, cut at a literal `?`);
 * 2. more literal characters in the whole template;
 * 3. fewer variables that span a variable structure (`{+x}`, `{#x}`, exploded `{x*}`);
 * 4. fewer variables;
 * 5. registered earlier.
 * A template without expressions has the whole URI as its prefix, so an exact static URI beats templates.
 * @example
 * const router = new TemplateRouter<string>();
 * router.add(parseUriTemplate("files://{+path}"), "any file");
 * router.add(parseUriTemplate("files://docs/{name}"), "a doc");
 * router.match("files://docs/a.md")?.value; // "a doc"
 */
export class TemplateRouter<V> {
  readonly #root = new Node<V>("", null);
  /** Reused by `match` (which is synchronous) so that a lookup allocates nothing but its result. */
  readonly #path: Node<V>[] = [];
  #order = 0;
  #size = 0;
  /** Templates whose literal prefix has an escape: a URI that writes it raw (`café`) is encoded before the walk. */
  #escaped = 0;

  /** How many templates are registered. */
  get size(): number {
    return this.#size;
  }

  /** Registers `template` with `value`; returns a function that removes it (calling it twice is harmless). */
  add(template: UriTemplate, value: V): () => void {
    const entry: Entry<V> = {
      template,
      value,
      literals: literalLength(template.template),
      wide: template.variables.filter((v) => v.explode || v.operator === "+" || v.operator === "#").length,
      variables: template.variables.length,
      order: this.#order++,
    };
    const node = this.#insert(template.literalPrefix);
    const list = node.entries;
    let i = list.length;
    while (i > 0 && before(entry, list[i - 1]!)) i--;
    list.splice(i, 0, entry);
    this.#size++;
    const escaped = template.literalPrefix.includes("%") ? 1 : 0;
    this.#escaped += escaped;
    return () => {
      const at = node.entries.indexOf(entry);
      if (at < 0) return;
      node.entries.splice(at, 1);
      this.#size--;
      this.#escaped -= escaped;
      this.#prune(node);
    };
  }

  /** The first template by precedence that matches `uri`, or null. */
  match(uri: string): TemplateMatch<V> | null {
    // the walk needs the encoded form; each template's match encodes for itself, and reports `uri` as given
    const walk = this.#escaped > 0 ? encodeUriText(uri) : uri;
    if (walk === null) return null;
    const path = this.#path;
    let depth = 0;
    let node = this.#root;
    if (node.entries.length > 0) path[depth++] = node;
    for (let i = 0; i < walk.length; ) {
      const child = node.children?.get(walk.charCodeAt(i));
      if (child === undefined || !walk.startsWith(child.label, i)) break;
      i += child.label.length;
      node = child;
      if (node.entries.length > 0) path[depth++] = node;
    }
    while (depth > 0) {
      const entries = path[--depth]!.entries;
      for (let j = 0; j < entries.length; j++) {
        const e = entries[j]!;
        const params = e.template.match(uri);
        if (params !== null) return { value: e.value, params, template: e.template };
      }
    }
    return null;
  }

  #insert(prefix: string): Node<V> {
    let node = this.#root;
    let i = 0;
    while (i < prefix.length) {
      const c = prefix.charCodeAt(i);
      node.children ??= new Map();
      const child = node.children.get(c);
      if (child === undefined) {
        const leaf = new Node<V>(prefix.slice(i), node);
        node.children.set(c, leaf);
        return leaf;
      }
      const label = child.label;
      let k = 1;
      while (k < label.length && i + k < prefix.length && label.charCodeAt(k) === prefix.charCodeAt(i + k))
        k++;
      if (k < label.length) {
        // split the edge: node -> mid (common part) -> child (the rest)
        const mid = new Node<V>(label.slice(0, k), node);
        child.label = label.slice(k);
        child.parent = mid;
        mid.children = new Map([[child.label.charCodeAt(0), child]]);
        node.children.set(c, mid);
        node = mid;
      } else node = child;
      i += k;
    }
    return node;
  }

  #prune(node: Node<V>): void {
    let n = node;
    while (n.parent !== null && n.entries.length === 0 && !n.children?.size) {
      n.parent.children?.delete(n.label.charCodeAt(0));
      n = n.parent;
    }
  }
}

/** Whether `a` goes before `b` in a bucket of equal literal prefixes. */
function before(a: Entry<unknown>, b: Entry<unknown>): boolean {
  if (a.literals !== b.literals) return a.literals > b.literals;
  if (a.wide !== b.wide) return a.wide < b.wide;
  if (a.variables !== b.variables) return a.variables < b.variables;
  return a.order < b.order;
}

/** Characters outside `{…}`. */
function literalLength(template: string): number {
  let n = 0;
  let inside = false;
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c === "{") inside = true;
    else if (c === "}") inside = false;
    else if (!inside) n++;
  }
  return n;
}
