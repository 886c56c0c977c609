/**
 * The skills extension (`io.modelcontextprotocol/skills`): `server.skill(name, …)` serves a skill's
 * `SKILL.md` and its files as `skill://<name>/…` resources, and lists them with `skills/list` and
 * `skills/get` (each entry with the sha256 digest and size of every file), and their folders with
 * `resources/directory/read`.
 */
import { ErrorCode, McpError } from "../errors.js";
import type { Extension } from "../extension.js";
import { listResult } from "../pagination.js";
import type { ServerSettings } from "../registry.js";
import type { ResourceOptions, ResourceRegistry } from "../resources/resources.js";

/** The extension's identifier. */
export const SKILLS = "io.modelcontextprotocol/skills";

/** Options of `server.skill(name, options)`. */
export interface SkillOptions {
  /** What the skill does and when to use it (the frontmatter's `description`, required). */
  description: string;
  /** The body of `SKILL.md`, in Markdown, after the frontmatter. */
  instructions: string;
  /** More files of the skill, by path inside it (`references/checklist.md`): their text. Default: none. */
  files?: { readonly [path: string]: string };
  /** More frontmatter fields (`license`, `compatibility`, …), strings only. Default: none. */
  frontmatter?: { readonly [key: string]: string };
}

/** A registered skill, as `skills/list` shows it. */
interface SkillEntry {
  readonly uri: string;
  readonly frontmatter: { readonly [key: string]: string };
  readonly resources: Promise<{ uri: string; digest: string; size: number }[]>;
  /** The files' paths inside the skill (`SKILL.md`, `references/checklist.md`, …). */
  readonly paths: readonly string[];
  /** What it was registered with (a server it is mounted in registers it again under its prefix). */
  readonly options: SkillOptions;
}

const DIRECTORY = "inode/directory";
const mimeOf = (path: string) => (path.endsWith(".md") ? "text/markdown" : "text/plain");

/** A skill's name: 1-64 of a-z 0-9 and "-", no leading, trailing or double "-". */
export const SKILL_NAME = /^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/;
const SEGMENT = /^[A-Za-z0-9._~-]+$/;
const MAX_FILES = 512;
const MAX_BYTES = 16 * 1024 * 1024;

async function describe(uri: string, text: string) {
  const bytes = new TextEncoder().encode(text);
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
  return { uri, digest: `sha256:${hex}`, size: bytes.length };
}

/** The skills of one server and the extension that serves them. */
export class Skills {
  readonly #skills = new Map<string, SkillEntry>();
  readonly #settings: ServerSettings;

  /** Skills listed in pages of `settings.pageSize`, with `settings.cache` as their caching hint. */
  constructor(settings: ServerSettings) {
    this.#settings = settings;
  }

  /**
   * Validates a skill and returns its resources to register (`SKILL.md` first); the entry is listed
   * from then on, until `remove` (which forgets this entry only, never a later one of the same name;
   * the resources are removed by the caller). Throws on programming mistakes: a bad name or path, a
   * duplicate, too many files.
   */
  add(
    name: string,
    options: SkillOptions,
  ): { files: [string, ResourceOptions<string>][]; remove: () => void } {
    if (typeof name !== "string" || !SKILL_NAME.test(name))
      throw new TypeError(
        `Invalid skill name ${JSON.stringify(name)}: use 1-64 of a-z 0-9 and "-", no leading, trailing or double "-"`,
      );
    if (this.#skills.has(name)) throw new Error(`Skill "${name}" is already registered`);
    if (typeof options?.description !== "string" || options.description === "")
      throw new TypeError(`Skill "${name}" needs a description`);
    if (typeof options.instructions !== "string")
      throw new TypeError(`Skill "${name}" needs its instructions`);
    const frontmatter = { ...options.frontmatter, name, description: options.description };
    // JSON strings are YAML double-quoted scalars: any text survives the frontmatter unchanged
    const yaml = Object.entries(frontmatter)
      .map(([k, v]) => `${k}: ${JSON.stringify(String(v))}`)
      .join("\n");
    const files: [string, string][] = [["SKILL.md", `---\n${yaml}\n---\n\n${options.instructions}`]];
    for (const [path, text] of Object.entries(options.files ?? {})) {
      if (path === "SKILL.md" || !path.split("/").every((s) => SEGMENT.test(s) && s !== "." && s !== ".."))
        throw new TypeError(`Skill "${name}": invalid file path ${JSON.stringify(path)}`);
      if (typeof text !== "string") throw new TypeError(`Skill "${name}": file ${path} must be a string`);
      files.push([path, text]);
    }
    if (files.length > MAX_FILES) throw new RangeError(`Skill "${name}" has more than ${MAX_FILES} files`);
    const total = files.reduce((n, [, text]) => n + new TextEncoder().encode(text).length, 0);
    if (total > MAX_BYTES) throw new RangeError(`Skill "${name}" is larger than 16 MiB`);
    const base = `skill://${name}/`;
    const resources = Promise.all(files.map(([path, text]) => describe(base + path, text)));
    const paths = files.map(([path]) => path);
    const entry: SkillEntry = { uri: `${base}SKILL.md`, frontmatter, resources, paths, options };
    this.#skills.set(name, entry);
    const remove = () => {
      if (this.#skills.get(name) === entry) this.#skills.delete(name);
    };
    const resourceOptions = files.map(([path, text]): [string, ResourceOptions<string>] => {
      const mimeType = mimeOf(path);
      const read = () => text;
      return path === "SKILL.md"
        ? [base + path, { name, description: options.description, mimeType, read }]
        : [base + path, { name: path, mimeType, read }];
    });
    return { files: resourceOptions, remove };
  }

  /** The skills registered now, by name, with the options each was registered with. */
  get registered(): ReadonlyMap<
    string,
    { readonly frontmatter: { readonly [key: string]: string }; readonly options: SkillOptions }
  > {
    return this.#skills;
  }

  async #entry(skill: SkillEntry) {
    return { uri: skill.uri, frontmatter: skill.frontmatter, resources: await skill.resources };
  }

  /**
   * `resources/directory/read`: the direct children of a skill's folder (`skill://name`) or of a
   * folder in it, subfolders as `inode/directory`; any other URI is -32602.
   */
  #directory(uri: unknown): { uri: string; name: string; mimeType: string }[] {
    if (typeof uri !== "string")
      throw new McpError(ErrorCode.InvalidParams, "Invalid params: uri must be a string");
    const m = /^skill:\/\/([^/]+)((?:\/[^/]+)*)\/?$/.exec(uri);
    const skill = m ? this.#skills.get(m[1]!) : undefined;
    const prefix = m?.[2] ? `${m[2].slice(1)}/` : "";
    const inside = skill?.paths.filter((p) => p.startsWith(prefix)) ?? [];
    if (!m || inside.length === 0)
      throw new McpError(ErrorCode.InvalidParams, `Not a directory: ${uri}`, { uri });
    const base = `skill://${m[1]}/${prefix}`;
    const children = new Map<string, { uri: string; name: string; mimeType: string }>();
    for (const path of inside) {
      const [head, ...rest] = path.slice(prefix.length).split("/");
      const dir = rest.length > 0;
      children.set(head!, { uri: base + head, name: head!, mimeType: dir ? DIRECTORY : mimeOf(head!) });
    }
    return [...children.values()];
  }

  /** The extension: declared in both eras while a skill is registered; anyone may list skills. */
  extension(): Extension {
    return {
      id: SKILLS,
      requires: ["picomcp/resources"],
      settings: () => (this.#skills.size > 0 ? { directoryRead: true } : undefined),
      methods: {
        "resources/directory/read": {
          era: "both",
          clientMustDeclare: false,
          run: (params) =>
            listResult(
              "resources",
              this.#directory(params.uri),
              params.cursor,
              this.#settings.pageSize,
              (e) => e,
            ),
        },
        "skills/list": {
          era: "both",
          clientMustDeclare: false,
          run: async (params, ctx) => {
            ctx.cache(this.#settings.cache);
            const all = await Promise.all([...this.#skills.values()].map((s) => this.#entry(s)));
            return listResult("skills", all, params.cursor, this.#settings.pageSize, (e) => e);
          },
        },
        "skills/get": {
          era: "both",
          clientMustDeclare: false,
          run: async (params, ctx) => {
            const uri = params.uri;
            if (typeof uri !== "string")
              throw new McpError(ErrorCode.InvalidParams, "Invalid params: uri must be a string");
            const skill = [...this.#skills.values()].find((s) => s.uri === uri);
            if (!skill) throw new McpError(ErrorCode.InvalidParams, `Unknown skill: ${uri}`, { uri });
            ctx.cache(this.#settings.cache);
            return { skill: await this.#entry(skill) };
          },
        },
      },
    };
  }
}

/** Registers a skill and its files as resources (a file URI that is taken undoes the whole skill); returns what removes it. */
export function addSkill(
  skills: Skills,
  resources: ResourceRegistry,
  name: string,
  options: SkillOptions,
): () => void {
  const { files, remove: forget } = skills.add(name, options);
  const removes: (() => void)[] = [];
  const remove = () => {
    forget();
    for (const r of removes) r();
  };
  try {
    for (const [uri, r] of files) removes.push(resources.add(uri, r));
  } catch (error) {
    remove();
    throw error;
  }
  return remove;
}
