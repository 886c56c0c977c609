/**
 * Each revision's official `schema.json` (vendored in test/suites/mcp-schema/<revision>/, see its README),
 * compiled strictly: a message may carry no field its revision does not define. The strict copy closes
 * every object schema that lists `properties` and says nothing of `additionalProperties`, merges each
 * `allOf` of object schemas into one closed object, and closes `EmptyResult` (an alias of the open
 * `Result`, whose index signature only lets each result type extend it). Left open, as their revision
 * says: `_meta` (every `…MetaObject`), JSON Schema objects (`inputSchema`, `outputSchema`,
 * `requestedSchema`), and what the schema already marks open. One decided exception: `extensions` in
 * the server's capabilities before 2026-07-28 (docs/eras.md, "capabilities.extensions").
 */
import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";

/** The revisions, oldest first. */
export const REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] as const;
export type Revision = (typeof REVISIONS)[number];

type Obj = { [key: string]: any };
/** Keys whose value is a JSON Schema (or a map of them) inside MCP messages: never closed. */
const JSON_SCHEMA_KEYS = new Set(["inputSchema", "outputSchema", "requestedSchema"]);

function load(revision: Revision): Obj {
  const url = new URL(`../suites/mcp-schema/${revision}/schema.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8"));
}

/** The strict copy of one revision's schema (see the file's comment). */
export function strictSchema(revision: Revision): Obj {
  const schema = load(revision);
  const key = schema.$defs ? "$defs" : "definitions";
  const defs: Obj = schema[key];
  const resolve = (s: Obj): Obj => (typeof s.$ref === "string" ? resolve(defs[s.$ref.split("/").pop()!]) : s);
  const close = (s: unknown, name?: string): void => {
    if (typeof s !== "object" || s === null) return;
    if (Array.isArray(s)) {
      for (const x of s) close(x);
      return;
    }
    const o = s as Obj;
    if (name?.endsWith("MetaObject")) return;
    if (Array.isArray(o.allOf) && o.allOf.every((m: Obj) => resolve(m).properties)) {
      const parts: Obj[] = o.allOf.map(resolve);
      const properties: Obj = {};
      for (const p of parts) {
        for (const [k, v] of Object.entries(p.properties as Obj))
          properties[k] = properties[k] ? { allOf: [properties[k], v] } : v;
      }
      o.properties = properties;
      o.required = [...new Set(parts.flatMap((p) => p.required ?? []))];
      o.type = "object";
      delete o.allOf;
    }
    if (o.properties && o.additionalProperties === undefined && o.patternProperties === undefined)
      o.additionalProperties = false;
    for (const [k, v] of Object.entries(o)) {
      if (k === "properties") {
        for (const [p, sub] of Object.entries(v as Obj)) if (!JSON_SCHEMA_KEYS.has(p)) close(sub);
      } else if (k !== "const" && k !== "enum" && k !== "default" && k !== "examples") close(v);
    }
  };
  for (const [name, def] of Object.entries(defs)) close(def, name);
  defs.EmptyResult = { ...defs.Result, additionalProperties: false };
  if (revision !== "2026-07-28") {
    // decided: extensions are declared to every revision (docs/eras.md)
    defs.ServerCapabilities.properties.extensions = {
      type: "object",
      additionalProperties: { type: "object" },
    };
  }
  return schema;
}

/** Checks one message of `revision` against a named definition; the errors, or [] when it is valid. */
export type Check = (definition: string, value: unknown) => string[];

const formats = {
  uri: (s: string) => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) && URL.canParse(s),
  "uri-template": () => true,
  byte: (s: string) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s),
};

/** A validator of `revision`'s strict schema, compiled once per definition. */
export function checker(revision: Revision): Check & { readonly defs: Obj } {
  const schema = strictSchema(revision);
  const modern = schema.$defs !== undefined;
  const ajv = modern
    ? new Ajv2020({ strict: false, allErrors: true, formats })
    : new Ajv({ strict: false, allErrors: true, formats });
  ajv.addSchema(schema, "mcp");
  const defs = modern ? schema.$defs : schema.definitions;
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  const check = (definition: string, value: unknown) => {
    if (!defs[definition]) throw new Error(`${revision} has no definition ${definition}`);
    let validate = compiled.get(definition);
    if (!validate) {
      validate = ajv.getSchema(`mcp#/${modern ? "$defs" : "definitions"}/${definition}`)!;
      compiled.set(definition, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath || "/"} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`,
    );
  };
  return Object.assign(check, { defs });
}

/** The definition of the request `method` sends, or undefined when the revision has none (an extension's). */
export function requestDef(defs: Obj, method: string): string | undefined {
  return Object.keys(defs).find(
    (k) =>
      (k.endsWith("Request") || k.endsWith("Notification")) && defs[k].properties?.method?.const === method,
  );
}

/** The definition a result of `method` must satisfy (`result` decides between the shapes a method has). */
export function resultDef(defs: Obj, method: string, result: Obj): string | undefined {
  if (result.resultType === "input_required") return "InputRequiredResult";
  // the tasks extension's answer (2026-07-28) is no type of the core schema: the common Result fields only
  if (result.resultType === "task") return "Result";
  if (method === "tools/call" && result.task !== undefined && defs.CreateTaskResult)
    return "CreateTaskResult";
  const request = requestDef(defs, method);
  if (!request) return undefined;
  const named = request.replace(/Request$/, "Result");
  return defs[named] ? named : "EmptyResult";
}
