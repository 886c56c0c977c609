/**
 * Trace context in `params._meta`: the configured propagators read `traceparent`, `tracestate` and
 * `baggage` (unprefixed, as the MCP semantic conventions and SEP-414 say) from what a client sent, and
 * write them into what the server sends. A malformed or oversized value is ignored: the span then
 * starts a trace of its own.
 */
import {
  type Context,
  propagation,
  ROOT_CONTEXT,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
} from "@opentelemetry/api";
import { isObject, type Params } from "../types.js";
import { metaOf, shortString } from "./attributes.js";

const getter: TextMapGetter<Params> = {
  keys: (carrier) => Object.keys(carrier),
  // only own string values, and none longer than a header may be: anything else is as if absent
  get: (carrier, key) => (Object.hasOwn(carrier, key) ? shortString(carrier[key]) : undefined),
};

const setter: TextMapSetter<{ [key: string]: unknown }> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** The fields of a propagator too old to name them: every `_meta` is given to it. */
const ANY: readonly string[] = [];

function fieldsOf(propagator: Pick<TextMapPropagator, "fields">): readonly string[] {
  return typeof propagator.fields === "function" ? propagator.fields() : ANY;
}

function hasAny(meta: Params, keys: readonly string[]): boolean {
  for (const key of keys) if (Object.hasOwn(meta, key)) return true;
  return false;
}

/** Reads and writes trace context with a propagator (default: the global one). */
export class MetaPropagation {
  readonly #propagator: TextMapPropagator | undefined;
  /** The keys the given propagator reads (asked once); undefined: ask the global one per message. */
  readonly #fields: readonly string[] | undefined;

  constructor(propagator: TextMapPropagator | undefined) {
    this.#propagator = propagator;
    this.#fields = propagator ? fieldsOf(propagator) : undefined;
  }

  /** The context a message's `_meta` carries (the root context when it carries none, or a malformed one). */
  extract(params: Params): Context {
    const meta = metaOf(params);
    if (meta === undefined) return ROOT_CONTEXT;
    try {
      const propagator = this.#propagator ?? propagation;
      // most messages carry no trace context: the propagator is asked only when a key it reads is there
      const fields = this.#fields ?? fieldsOf(propagation);
      return fields === ANY || hasAny(meta, fields)
        ? propagator.extract(ROOT_CONTEXT, meta, getter)
        : ROOT_CONTEXT;
    } catch {
      // a propagator that throws on what a client sent must not fail the request
      return ROOT_CONTEXT;
    }
  }

  /** `params` with `context` written into a copy of its `_meta` (the original is never changed). */
  inject(params: unknown, context: Context): Params {
    const p: Params = isObject(params) ? params : {};
    const meta: { [key: string]: unknown } = { ...metaOf(p) };
    try {
      if (this.#propagator) this.#propagator.inject(context, meta, setter);
      else propagation.inject(context, meta, setter);
    } catch {
      return p;
    }
    return Object.keys(meta).length === 0 ? p : { ...p, _meta: meta };
  }
}
