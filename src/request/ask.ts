/** Asking the client — elicitation, sampling, roots — in both eras: capability checks, the wire shape, the answer's check. */
import {
  checkElicitAnswer,
  type InputRequest,
  InputRequiredSignal,
  type InputRound,
  isElicitAnswer,
  isSampleAnswer,
  quiet,
  refuse,
  rootsOfAnswer,
} from "../eras/input.js";
import { missingCapability } from "../eras/stateless.js";
import type { Features } from "../eras/versions.js";
import { ClientCapabilityError } from "../errors.js";
import type {
  ClientCapabilities,
  ElicitFormParams,
  ElicitResult,
  ElicitUrlParams,
  Params,
  Root,
  SampleParams,
  SampleResult,
} from "../types.js";

/** Options of a request to the client. */
export interface ClientRequestOptions {
  /** Milliseconds to wait for the answer. Default: the server's `requestTimeoutMs` (60 s). */
  timeoutMs?: number;
  /**
   * 2026-07-28: the key of this input request in the `InputRequiredResult`. Default: the method and
   * the call's position in the handler (`elicitation-1`, `sampling-1`, `roots-1`, …).
   */
  key?: string;
  /** Initialize era: `_meta` entries to send with the request (a task's `related-task`, say). */
  meta?: { readonly [key: string]: unknown };
  /** Initialize era: gives the request up when this aborts, as when the request's own `signal` does. */
  signal?: AbortSignal;
}

/** `params` with `meta`'s entries added to its `_meta`. */
export function withMeta(params: object, meta: { readonly [key: string]: unknown } | undefined): object {
  if (meta === undefined) return params;
  const own = (params as { _meta?: unknown })._meta;
  return { ...params, _meta: typeof own === "object" && own !== null ? { ...own, ...meta } : meta };
}

/** Where a request's calls to the client go: what asking needs of it. */
export interface AskChannel {
  readonly capabilities: ClientCapabilities;
  readonly features: Features;
  /** Initialize era: sends `method` to the client and resolves with its result. */
  request(method: string, params: object, options: ClientRequestOptions | undefined): Promise<Params>;
  /** 2026-07-28: the answer from the client's retry, or a rejection that ends this run with an input request. */
  input<T>(
    method: InputRequest["method"],
    params: object,
    key: string | undefined,
    accept: (value: unknown) => T | undefined,
  ): Promise<T>;
}

/**
 * 2026-07-28: the answer in `round` (the client's retry), or an input request that ends this run;
 * `asker` (the method of the request that asks) has no round when its extension did not declare `input`.
 */
export function fromRound<T>(
  round: InputRound | undefined,
  asker: string,
  request: InputRequest,
  key: string | undefined,
  accept: (value: unknown) => T | undefined,
): Promise<T> {
  const { method } = request;
  if (!round) {
    const why = `${asker} cannot ask the client in 2026-07-28: its extension must declare input: true on it`;
    return refuse(new Error(`${method}: ${why}`));
  }
  const k = key ?? round.autoKey(method);
  const value = round.answer(k, request, accept);
  return value === undefined ? refuse(new InputRequiredSignal(k)) : Promise.resolve(value);
}

/** `ctx.elicit` on `a`. */
export function elicit(
  a: AskChannel,
  params: ElicitFormParams | ElicitUrlParams,
  options: ClientRequestOptions | undefined,
): Promise<ElicitResult> {
  const caps = a.capabilities.elicitation as { form?: object; url?: object } | undefined;
  if (a.features.stateless) {
    if (params.mode === "url") {
      if (!caps?.url) return refuse(missingCapability({ elicitation: { url: {} } }));
      // 2026-07-28 has no elicitationId: the retry itself says the interaction is done
      const wire = { mode: "url", message: params.message, url: params.url };
      return a.input("elicitation/create", wire, options?.key, toElicitResult);
    }
    if (!caps || (caps.form === undefined && caps.url !== undefined))
      return refuse(missingCapability({ elicitation: { form: {} } }));
    const wire = { message: params.message, requestedSchema: params.requestedSchema };
    return a.input("elicitation/create", wire, options?.key, toElicitResult);
  }
  if (params.mode === "url") {
    if (!caps?.url || !a.features.urlElicitation) {
      return Promise.reject(new ClientCapabilityError("URL-mode elicitation", "elicitation.url"));
    }
    const wire = { ...params, elicitationId: params.elicitationId ?? crypto.randomUUID() };
    return quiet(a.request("elicitation/create", wire, options).then(checkElicitResult));
  }
  // a client that declares `elicitation: {}` supports form mode (2025-06-18 had no modes)
  const formOk = caps && (caps.form !== undefined || caps.url === undefined);
  if (!formOk || !a.features.elicitation) {
    return Promise.reject(new ClientCapabilityError("form elicitation", "elicitation"));
  }
  const wire: { [key: string]: unknown } = {
    message: params.message,
    requestedSchema: params.requestedSchema,
  };
  if (a.features.urlElicitation) wire.mode = "form";
  return quiet(a.request("elicitation/create", wire, options).then(checkElicitResult));
}

/** `ctx.sample` on `a`. */
export function sample(
  a: AskChannel,
  params: SampleParams,
  options: ClientRequestOptions | undefined,
): Promise<SampleResult> {
  const caps = a.capabilities.sampling as { tools?: object } | undefined;
  if (a.features.stateless) {
    if (!caps) return refuse(missingCapability({ sampling: {} }));
    if ((params.tools || params.toolChoice) && !caps.tools)
      return refuse(missingCapability({ sampling: { tools: {} } }));
    return a.input("sampling/createMessage", params, options?.key, toSampleResult);
  }
  if (!caps) return Promise.reject(new ClientCapabilityError("sampling", "sampling"));
  if ((params.tools || params.toolChoice) && !caps.tools) {
    return Promise.reject(new ClientCapabilityError("tool use in sampling", "sampling.tools"));
  }
  const asked = a.request("sampling/createMessage", params, options).then((r) => {
    const result = toSampleResult(r);
    if (!result) throw new Error("The client answered sampling/createMessage with a malformed result");
    return result;
  });
  return quiet(asked);
}

/** `ctx.roots` on `a`. */
export function roots(a: AskChannel, options: ClientRequestOptions | undefined): Promise<Root[]> {
  if (a.features.stateless) {
    if (!a.capabilities.roots) return refuse(missingCapability({ roots: {} }));
    return a.input("roots/list", {}, options?.key, toRoots);
  }
  if (!a.capabilities.roots) return refuse(new ClientCapabilityError("roots", "roots"));
  const asked = a.request("roots/list", {}, options);
  return quiet(asked.then((r) => (Array.isArray(r.roots) ? (r.roots as Root[]) : [])));
}

const toElicitResult = isElicitAnswer as (r: unknown) => ElicitResult | undefined;
const toSampleResult = isSampleAnswer as (r: unknown) => SampleResult | undefined;
const toRoots = rootsOfAnswer as (r: unknown) => Root[] | undefined;

const checkElicitResult = checkElicitAnswer as unknown as (r: { [key: string]: unknown }) => ElicitResult;
