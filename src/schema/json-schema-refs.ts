/**
 * The map of one JSON Schema document, made before anything is compiled: every schema resource (the root
 * and each `$id`, resolved against the nearest enclosing `$id`), its `$anchor`s and `$dynamicAnchor`s, its
 * dialect (`$schema`: 2020-12 or draft-07), and the keywords each subschema uses — a keyword picomcp does
 * not know is refused here, by name. `$ref`s resolve against this map only: nothing is ever fetched. A
 * document that refers to the 2020-12 meta-schema (or a vocabulary's) gets the bundled copies mapped beside it.
 */
import { fail, isObject, type Obj, show } from "./json-schema-checks.js";
import { META_SCHEMA_IDS_2020_12, metaSchemas2020_12 } from "./json-schema-meta.js";

/** The dialects picomcp validates: 2020-12 (the default, MCP's), and draft-07 (what older clients send). */
export type Dialect = "2020-12" | "draft-07";

/** One schema resource: the root, or a subschema with an `$id`. */
export interface Resource {
  /** Its position in {@link SchemaMap.resources}, for the dynamic scope. */
  readonly index: number;
  /** Its absolute URI, without fragment. */
  readonly uri: string;
  readonly node: unknown;
  readonly anchors: Map<string, unknown>;
  /** The `$dynamicAnchor` names it declares. */
  readonly dynamic: Set<string>;
}

/** Where a subschema sits: its resource, its base URI, its dialect, its JSON pointer (for messages). */
export interface Place {
  readonly resource: Resource;
  readonly dialect: Dialect;
  readonly where: string;
}

/** The map of a document. */
export interface SchemaMap {
  readonly resources: Resource[];
  readonly byUri: Map<string, Resource>;
  readonly places: Map<object, Place>;
  /** Whether any subschema uses `$dynamicRef` (the dynamic scope is then kept while validating). */
  dynamic: boolean;
}

/** Keywords whose value is one schema. */
const ONE = ["additionalProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems"];
const ONE_MORE = ["contains", "not", "if", "then", "else", "additionalItems", "contentSchema"];
/** Keywords whose value is an object of schemas. */
const MAP = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"];
/** Keywords whose value is an array of schemas. */
const LIST = ["allOf", "anyOf", "oneOf", "prefixItems"];
/** Keywords that only constrain the value itself. */
const ASSERTIONS = [
  "type",
  "const",
  "enum",
  "multipleOf",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "maxContains",
  "minContains",
  "maxProperties",
  "minProperties",
  "required",
  "dependentRequired",
];
/** Keywords with no effect on validation: annotations, identifiers, `format` (an annotation in 2020-12). */
const ANNOTATIONS = [
  "$schema",
  "$id",
  "$comment",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "format",
  "contentEncoding",
  "contentMediaType",
];
const CORE = ["$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "items"];
const KNOWN = new Set([...ONE, ...ONE_MORE, ...MAP, ...LIST, ...ASSERTIONS, ...ANNOTATIONS, ...CORE]);
/** 2019-09 and 2020-12 keywords a draft-07 schema cannot use (a draft-07 validator would ignore them). */
const NEWER = new Set([
  "$anchor",
  "$dynamicRef",
  "$dynamicAnchor",
  "prefixItems",
  "dependentSchemas",
  "dependentRequired",
  "unevaluatedProperties",
  "unevaluatedItems",
  "minContains",
  "maxContains",
  "contentSchema",
]);
/** What a draft-07 `$ref` may sit beside (draft-07 ignores every other sibling of `$ref`). */
const REF_SIBLINGS_07 = new Set([...ANNOTATIONS, "definitions", "$defs", "$ref"]);
/** The keywords that are only known in other dialects or versions, with what to use instead. */
const HINTS: { readonly [keyword: string]: string } = {
  $recursiveRef: 'the 2019-09 "$recursiveRef"; use "$dynamicRef" (2020-12)',
  $recursiveAnchor: 'the 2019-09 "$recursiveAnchor"; use "$dynamicAnchor" (2020-12)',
  id: 'draft-04 "id"; use "$id"',
  nullable: 'OpenAPI\'s "nullable"; use "type": ["…", "null"]',
  example: 'OpenAPI\'s "example"; use "examples": [ … ]',
  discriminator: 'OpenAPI\'s "discriminator"; use "oneOf" with a "const" property in each branch',
  $vocabulary: "custom meta-schemas",
};

const DIALECTS: { readonly [uri: string]: Dialect } = {
  "json-schema.org/draft/2020-12/schema": "2020-12",
  "json-schema.org/draft-07/schema": "draft-07",
};

function dialectOf(value: unknown, where: string): Dialect {
  const key = typeof value === "string" ? value.replace(/^https?:\/\//, "").replace(/#$/, "") : undefined;
  const dialect = key === undefined ? undefined : DIALECTS[key];
  if (!dialect) {
    throw fail(
      `"$schema" ${show(value)} at ${where} is not supported: picomcp validates JSON Schema 2020-12 ` +
        '("https://json-schema.org/draft/2020-12/schema", the default) and draft-07',
    );
  }
  return dialect;
}

/** Resolves a URI reference against a base; throws the registration error for an invalid one. */
export function resolveUri(ref: string, base: string, where: string, key: string): URL {
  try {
    return new URL(ref, base);
  } catch {
    throw fail(`${key} ${show(ref)} at ${where} is not a valid URI reference against the base ${show(base)}`);
  }
}

/** The base URI of a document without `$id`: relative references resolve inside it, and nowhere else. */
const DEFAULT_BASE = "picomcp:///schema.json";
const ANCHOR = /^[A-Za-z_][-A-Za-z0-9._]*$/;
const uriOf = (url: URL) => url.href.replace(/#.*$/, "");

/** The `$id`s of the bundled meta-schemas. */
const META_URIS: ReadonlySet<string> = new Set(META_SCHEMA_IDS_2020_12);

/** Whether `ref`, resolved against `base`, names a bundled meta-schema (an invalid one is reported later). */
function namesMetaSchema(ref: unknown, base: string): boolean {
  if (typeof ref !== "string") return false;
  try {
    return META_URIS.has(uriOf(new URL(ref, base)));
  } catch {
    return false;
  }
}

/** Maps a document; throws a `TypeError` naming the first keyword or identifier it cannot use. */
export function mapSchema(root: unknown): SchemaMap {
  const map: SchemaMap = { resources: [], byUri: new Map(), places: new Map(), dynamic: false };
  const newResource = (uri: string, node: unknown, where: string): Resource => {
    if (map.byUri.has(uri)) throw fail(`"$id" ${show(uri)} at ${where} is used twice in the schema`);
    const resource = {
      index: map.resources.length,
      uri,
      node,
      anchors: new Map(),
      dynamic: new Set<string>(),
    };
    map.resources.push(resource);
    map.byUri.set(uri, resource);
    return resource;
  };
  let wantsMeta = false;
  // `meta`: a bundled meta-schema, the one place "$vocabulary" is read (and ignored: the vocabularies are fixed)
  const walk = (s: unknown, parent: Place, where: string, isRoot: boolean, meta = false): void => {
    if (typeof s === "boolean") return;
    if (!isObject(s)) throw fail(`the schema at ${where} must be an object or a boolean`);
    let place = parent;
    if (s.$id !== undefined) {
      if (typeof s.$id !== "string") throw fail(`"$id" at ${where} must be a string`);
      const url = resolveUri(s.$id, parent.resource.uri, where, '"$id"');
      if (url.hash.length > 1 && !s.$id.startsWith("#")) {
        throw fail(
          `"$id" ${show(s.$id)} at ${where} must not have a fragment: name the place with "$anchor"`,
        );
      }
      const dialect = s.$schema === undefined ? parent.dialect : dialectOf(s.$schema, where);
      if (dialect === "draft-07" && s.$id.startsWith("#")) {
        place = { ...parent, dialect, where }; // draft-07's "$id": "#name" is an anchor
        addAnchor(place, s.$id.slice(1), s, where, "$id");
      } else {
        const resource = isRoot ? parent.resource : newResource(uriOf(url), s, where);
        place = { resource, dialect, where };
      }
    } else if (s.$schema !== undefined) {
      if (!isRoot) throw fail(`"$schema" at ${where} is only allowed at the root of a schema resource`);
      place = { ...parent, dialect: dialectOf(s.$schema, where) };
    } else place = { ...parent, where };
    if (!map.places.has(s)) map.places.set(s, place);
    checkKeywords(s, place.dialect, where, meta);
    for (const key of ["$anchor", "$dynamicAnchor"] as const) {
      if (s[key] !== undefined) addAnchor(place, s[key], s, where, key);
      if (key === "$dynamicAnchor" && typeof s[key] === "string") place.resource.dynamic.add(s[key]);
    }
    if (s.$dynamicRef !== undefined) map.dynamic = true;
    if (!meta && !wantsMeta) {
      const base = place.resource.uri;
      wantsMeta = namesMetaSchema(s.$ref, base) || namesMetaSchema(s.$dynamicRef, base);
    }
    for (const key of Object.keys(s)) {
      const value = s[key];
      const at = `${where}/${escapePointer(key)}`;
      if (ONE.includes(key) || ONE_MORE.includes(key)) walk(value, place, at, false, meta);
      else if (LIST.includes(key) || (key === "items" && Array.isArray(value))) {
        if (!Array.isArray(value)) throw fail(`"${key}" at ${where} must be an array of schemas`);
        for (const [i, v] of value.entries()) walk(v, place, `${at}/${i}`, false, meta);
      } else if (key === "items") walk(value, place, at, false, meta);
      else if (MAP.includes(key)) {
        if (!isObject(value)) throw fail(`"${key}" at ${where} must be an object`);
        for (const name of Object.keys(value)) {
          if (key === "dependencies" && Array.isArray(value[name])) continue; // draft-07's dependentRequired
          walk(value[name], place, `${at}/${escapePointer(name)}`, false, meta);
        }
      }
    }
  };
  const id =
    isObject(root) && typeof root.$id === "string"
      ? resolveUri(root.$id, DEFAULT_BASE, "#", '"$id"')
      : undefined;
  const base = newResource(id ? uriOf(id) : DEFAULT_BASE, root, "#");
  if (id) map.byUri.set(DEFAULT_BASE, base); // relative references inside a document without a base
  walk(root, { resource: base, dialect: "2020-12", where: "#" }, "#", true);
  if (wantsMeta) {
    for (const doc of metaSchemas2020_12()) {
      const uri = (doc as Obj).$id as string;
      if (map.byUri.has(uri)) continue; // the document declares its own resource under that URI
      const where = `${uri}#`;
      walk(doc, { resource: newResource(uri, doc, where), dialect: "2020-12", where }, where, true, true);
    }
  }
  return map;
}

function addAnchor(place: Place, name: unknown, s: Obj, where: string, key: string): void {
  if (typeof name !== "string" || !ANCHOR.test(name)) throw fail(`"${key}" at ${where} must be a plain name`);
  const anchors = place.resource.anchors;
  if (anchors.has(name) && anchors.get(name) !== s) {
    throw fail(`the anchor ${show(name)} at ${where} is declared twice in ${show(place.resource.uri)}`);
  }
  anchors.set(name, s);
}

function checkKeywords(s: Obj, dialect: Dialect, where: string, meta: boolean): void {
  for (const key of Object.keys(s)) {
    if (meta && key === "$vocabulary") continue;
    if (KNOWN.has(key) || key.startsWith("x-")) {
      if (dialect === "draft-07" && NEWER.has(key)) {
        throw fail(`"${key}" at ${where} is not a draft-07 keyword; declare "$schema" 2020-12 to use it`);
      }
      if (
        dialect === "draft-07" &&
        s.$ref !== undefined &&
        !REF_SIBLINGS_07.has(key) &&
        !key.startsWith("x-")
      ) {
        throw fail(
          `"${key}" at ${where} sits beside "$ref", which draft-07 ignores: move it into an "allOf" with the "$ref"`,
        );
      }
      continue;
    }
    const hint = HINTS[key];
    throw fail(
      `unsupported keyword "${key}" at ${where}${hint ? ` (${hint})` : ""}: picomcp refuses keywords it cannot ` +
        'check rather than ignore them; extension keywords must start with "x-"',
    );
  }
}

const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** A `$ref` resolved: the subschema it names, and where that subschema sits. */
export interface Target {
  readonly node: unknown;
  readonly place: Place;
}

/**
 * Resolves `ref` against the base of `from`: to a resource, a JSON pointer inside one, or an anchor.
 * Throws the registration error when it points outside the document (remote references are never
 * fetched) or at nothing.
 */
export function resolveRef(map: SchemaMap, ref: unknown, from: Place, key: string): Target {
  if (typeof ref !== "string") throw fail(`"${key}" at ${from.where} must be a string`);
  const url = resolveUri(ref, from.resource.uri, from.where, key);
  const resource = map.byUri.get(uriOf(url));
  if (!resource) {
    const remote = /^https?:$/.test(url.protocol);
    throw new TypeError(
      `Unsupported ${key} ${show(ref)} at ${from.where}: ${remote ? "a remote schema" : "a schema outside this document"}` +
        ` (${uriOf(url)}). picomcp never fetches remote or external schemas. Copy the referenced schema into ` +
        `"$defs" and refer to it as "#/$defs/<name>".`,
    );
  }
  const fragment = decode(url.hash.slice(1));
  const missing = () => fail(`${key} ${show(ref)} at ${from.where} does not point to anything in the schema`);
  if (fragment !== "" && !fragment.startsWith("/")) {
    const node = resource.anchors.get(fragment);
    if (node === undefined) throw missing();
    return { node, place: placeOf(map, node, resource, from) };
  }
  let node: unknown = resource.node;
  let place = placeOf(map, node, resource, from);
  for (const raw of fragment === "" ? [] : fragment.slice(1).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    const parent = node as Obj;
    node =
      typeof parent === "object" && parent !== null && Object.hasOwn(parent, token)
        ? parent[token]
        : undefined;
    if (node === undefined) throw missing();
    if (typeof node === "object" && node !== null) place = map.places.get(node) ?? place;
  }
  return { node, place };
}

function placeOf(map: SchemaMap, node: unknown, resource: Resource, from: Place): Place {
  return (typeof node === "object" && node !== null && map.places.get(node)) || { ...from, resource };
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
