/**
 * The names the MCP semantic conventions give spans, attributes and metrics, and what one message
 * says of itself: its span name and attributes, the outcome its answer records.
 */
import type { Attributes } from "@opentelemetry/api";
import type { Connection } from "../connection.js";
import { META } from "../eras/stateless.js";
import { isStatelessVersion } from "../eras/versions.js";
import type { Carrier } from "../extension.js";
import { clientOf, peerOf } from "../http/request.js";
import { isObject, type Params } from "../types.js";

/** Attribute names (the MCP, GenAI, JSON-RPC, RPC, network and error conventions). */
export const A = {
  method: "mcp.method.name",
  protocolVersion: "mcp.protocol.version",
  sessionId: "mcp.session.id",
  resourceUri: "mcp.resource.uri",
  requestId: "jsonrpc.request.id",
  statusCode: "rpc.response.status_code",
  errorType: "error.type",
  toolName: "gen_ai.tool.name",
  promptName: "gen_ai.prompt.name",
  operation: "gen_ai.operation.name",
  toolArguments: "gen_ai.tool.call.arguments",
  toolResult: "gen_ai.tool.call.result",
  transport: "network.transport",
  protocolName: "network.protocol.name",
  networkVersion: "network.protocol.version",
  clientAddress: "client.address",
  clientPort: "client.port",
  /** picomcp's own: the status of a task (`working`, `input_required`, `completed`, …). */
  taskStatus: "mcp.task.status",
  /** picomcp's own: a task's id, on its span. */
  taskId: "mcp.task.id",
  /** picomcp's own: the name `instrument`'s `redis` option gives a picomcp/redis store. */
  redisStore: "picomcp.redis.store",
} as const;

/**
 * The most characters of a string a span carries (its name, an attribute, a status message), and of a
 * `_meta` value read at all: no header of W3C trace context is longer.
 */
export const MAX_VALUE = 8192;

/** The string `value`, if it is one of at most {@link MAX_VALUE} characters. */
export function shortString(value: unknown): string | undefined {
  return typeof value === "string" && value.length <= MAX_VALUE ? value : undefined;
}

/**
 * `value` cut to {@link MAX_VALUE} characters, never between the halves of a surrogate pair: every
 * string a client could make long goes through it before a span (or a metric) holds it.
 */
export function cap(value: string): string {
  if (value.length <= MAX_VALUE) return value;
  const code = value.charCodeAt(MAX_VALUE - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? MAX_VALUE - 1 : MAX_VALUE;
  // a copy of its own: a slice of a long string keeps the whole of it alive in V8
  return JSON.parse(JSON.stringify(value.slice(0, end))) as string;
}

/** `mcp.resource.uri` of `uri`: redacted (see {@link redactUri}) unless `redact` is false, and capped. */
export function uriAttribute(uri: string, redact: boolean): string {
  return redact ? redactUri(uri) : cap(uri);
}

/** What replaces a secret of a URI (the OpenTelemetry conventions' word for it). */
export const REDACTED = "REDACTED";
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
/** The schemes a URL parser reads `\` as `/` in, and whose authority follows however many slashes. */
const SPECIAL = new Set(["http", "https", "ws", "wss", "ftp", "file"]);
/** A path parameter (`;name=value`, `;value`) up to the next `;` or `/`. */
const PARAMETER = /;([^;/=]*)(=[^;/]*)?/g;

/**
 * `uri` with its user info and the values of its path parameters, query and fragment replaced by
 * `REDACTED`, keys kept (`https://REDACTED:REDACTED@host/a;sid=REDACTED?access_token=REDACTED&page=REDACTED#REDACTED`),
 * then capped. The user info ends at the last `@` before the authority's first `/` (`\` too, for
 * http(s), ws(s), ftp and file): a `?`, `#` or `@` in a password hides none of it.
 */
export function redactUri(uri: string): string {
  let out = "";
  let rest = uri;
  const authority = authorityOf(uri);
  if (authority !== undefined) {
    const { start, end } = authority;
    const at = uri.lastIndexOf("@", end - 1);
    out = at >= start ? `${uri.slice(0, start)}${REDACTED}:${REDACTED}@` : uri.slice(0, start);
    rest = uri.slice(at >= start ? at + 1 : start);
  }
  const hash = rest.indexOf("#");
  let query = rest.indexOf("?");
  if (hash !== -1 && query > hash) query = -1; // a `?` in the fragment is the fragment's
  const path = rest.slice(0, query !== -1 ? query : hash !== -1 ? hash : rest.length);
  out += authority === undefined || !path.includes(";") ? path : path.replace(PARAMETER, parameter);
  if (query !== -1) out += `?${redactPairs(rest.slice(query + 1, hash === -1 ? rest.length : hash))}`;
  if (hash !== -1) out += `#${redactPairs(rest.slice(hash + 1))}`;
  return cap(out);
}

/** Where a URI's authority starts and ends (at its first `/`, or the end): after `//`, or a special scheme's slashes. */
function authorityOf(uri: string): { start: number; end: number } | undefined {
  const scheme = SCHEME.exec(uri);
  const special = scheme !== null && SPECIAL.has(scheme[1]!.toLowerCase());
  const slash = (i: number) => uri[i] === "/" || (special && uri[i] === "\\");
  let start = scheme === null ? 0 : scheme[0].length;
  if (special) while (slash(start)) start++;
  else if (slash(start) && slash(start + 1)) start += 2;
  else return undefined;
  let end = start;
  while (end < uri.length && !slash(end)) end++;
  return { start, end };
}

/** `;name=value` as `;name=REDACTED`, `;value` as `;REDACTED` (an empty one stays). */
function parameter(_: string, name: string, value: string | undefined): string {
  if (value === undefined) return name === "" ? ";" : `;${REDACTED}`;
  return value === "=" ? `;${name}=` : `;${name}=${REDACTED}`;
}

/** An error's message for a span's status, capped: the request's own `uri` in it redacted too, when `redact`. */
export function statusMessage(message: unknown, uri: unknown, redact: boolean): string | undefined {
  if (typeof message !== "string") return undefined;
  if (!redact || typeof uri !== "string" || uri === "" || !message.includes(uri)) return cap(message);
  return cap(message.replaceAll(uri, redactUri(uri)));
}

/** `a=1&b&c=` as `a=REDACTED&REDACTED&c=`: every value (a part without `=` is one) replaced, up to the cap. */
function redactPairs(part: string): string {
  let out = "";
  let eq = -1;
  for (let i = 0; out.length < MAX_VALUE; ) {
    let end = part.indexOf("&", i);
    if (end === -1) end = part.length;
    if (eq < i && eq !== -2) eq = part.indexOf("=", i);
    if (eq === -1) eq = -2; // no `=` further on: never searched for again
    if (eq >= 0 && eq < end) out += part.slice(i, eq + 1) + (eq + 1 < end ? REDACTED : "");
    else if (end > i) out += REDACTED;
    if (end === part.length) break;
    out += "&";
    i = end + 1;
  }
  return out;
}

/** The `_meta` of `params`, when it is an object. */
export function metaOf(params: Params): Params | undefined {
  const meta = params._meta;
  return isObject(meta) ? meta : undefined;
}

/** The tool or prompt name a message is about: the `target` of its span name. */
export function targetOf(method: string, params: Params): string | undefined {
  return method === "tools/call" || method === "prompts/get"
    ? typeof params.name === "string"
      ? params.name
      : undefined
    : undefined;
}

/** `mcp.server.operation.duration`'s series of one name the server knows, or of `_OTHER`. */
export interface Series {
  /** `mcp.method.name`: a method the server knows, or `_OTHER`. */
  readonly method: string;
  /** `gen_ai.tool.name` or `gen_ai.prompt.name`, when the tool or prompt is one the server registered. */
  readonly targetKey: string | undefined;
  readonly target: string | undefined;
  /** Its points' attribute sets, by revision, network and outcome (see `Points`). */
  readonly points: Map<string, Map<Network, Map<string, Attributes>>>;
}

function seriesOf(method: string, targetKey?: string, target?: string): Series {
  return { method, targetKey, target, points: new Map() };
}

/**
 * What a method (and its target) says alone, made once per pair the server knows and shared by every
 * message of it: the span name, the attributes a sampler decides on, the options a span starts with,
 * and the series it counts in.
 */
export interface Kind {
  /** `mcp.method.name` on spans (capped). */
  readonly method: string;
  /** `{mcp.method.name} {target}`, or the method alone (capped). */
  readonly name: string;
  /** The target (capped), on the span. */
  readonly target: string | undefined;
  /** `mcp.method.name`, the target and `gen_ai.operation.name` (frozen: what every sampler is given). */
  readonly start: Attributes;
  /** Its series as a request: `_OTHER` unless the server handles the method. */
  readonly request: Series;
  /** Its series as a notification: `_OTHER` unless it is the spec's or the server handles it. */
  readonly notification: Series;
}

/** The {@link Kind} of `method` about `target`, counted in `request` and `notification`. */
export function kindOf(
  method: string,
  target: string | undefined,
  request: Series,
  notification: Series,
): Kind {
  const m = cap(method);
  const start: Attributes = { [A.method]: m };
  const t = target === undefined ? undefined : cap(target);
  if (t !== undefined) start[method === "tools/call" ? A.toolName : A.promptName] = t;
  if (method === "tools/call") start[A.operation] = "execute_tool";
  const name = t === undefined ? m : cap(`${m} ${t}`);
  return { method: m, name, target: t, start: Object.freeze(start), request, notification };
}

/** Notifications a client sends that the spec defines: the metrics name them, whoever handles them. */
const CLIENT_NOTIFICATIONS = new Set([
  "notifications/initialized",
  "notifications/cancelled",
  "notifications/progress",
  "notifications/roots/list_changed",
]);

/** Whether the server registered a method, a notification, a tool or a prompt by this name (see `McpServer.knows`). */
export type Knows = (what: "method" | "notification" | "tool" | "prompt", name: string) => boolean;

/** The kinds of a method the server knows: untargeted, and by the tools or prompts it registered. */
interface Known {
  readonly kind: Kind;
  readonly byTarget: Map<string, Kind>;
}

/** Targets kept per method: past it, a kind is made per message (the server registered that many). */
const TARGETS = 1024;

/**
 * Kinds by method, then by target: only names the server registered are kept (its methods and
 * notifications, the spec's notifications, its tools and prompts, at most {@link TARGETS} of each),
 * so nothing a client invents is ever kept, however long or many. Any other name gets a kind made
 * for its one message, counted in the metrics as `_OTHER`.
 */
export class Kinds {
  /** The series of every name the server does not know, and of a -32601 answer. */
  readonly other = seriesOf("_OTHER");
  readonly #byMethod = new Map<string, Known>();
  readonly #knows: Knows;

  constructor(knows: Knows) {
    this.#knows = knows;
  }

  /** The kind of `method` about `target`. */
  of(method: string, target: string | undefined): Kind {
    const known = this.#byMethod.get(method) ?? this.#known(method);
    if (known === undefined) return kindOf(method, target, this.other, this.other);
    if (target === undefined) return known.kind;
    const kind = known.byTarget.get(target);
    if (kind !== undefined) return kind;
    const { request, notification } = known.kind;
    if (!this.#knows(method === "tools/call" ? "tool" : "prompt", target))
      return kindOf(method, target, request, notification); // counted without its target
    const own = seriesOf(request.method, method === "tools/call" ? A.toolName : A.promptName, target);
    const made = kindOf(method, target, request === this.other ? request : own, notification);
    if (known.byTarget.size < TARGETS) known.byTarget.set(target, made);
    return made;
  }

  /** How many kinds are kept, and the characters of their names: what a test asserts stays bounded. */
  get size(): { kinds: number; chars: number } {
    let kinds = 0;
    let chars = 0;
    for (const [method, known] of this.#byMethod) {
      kinds += 1 + known.byTarget.size;
      chars += method.length;
      for (const target of known.byTarget.keys()) chars += target.length;
    }
    return { kinds, chars };
  }

  #known(method: string): Known | undefined {
    const request = this.#knows("method", method);
    const notification = CLIENT_NOTIFICATIONS.has(method) || this.#knows("notification", method);
    if (!request && !notification) return undefined;
    const kind = kindOf(
      method,
      undefined,
      request ? seriesOf(method) : this.other,
      notification ? seriesOf(method) : this.other,
    );
    const known = { kind, byTarget: new Map<string, Kind>() };
    this.#byMethod.set(method, known);
    return known;
  }
}

/** The revision a message is served at, as far as it is known before it is handled. */
export function versionOf(conn: Connection, params: Params): string | undefined {
  if (conn.state === "ready") return conn.protocolVersion;
  const v = metaOf(params)?.[META.protocolVersion];
  return isStatelessVersion(v) ? (v as string) : undefined;
}

/** What carried a message, as the metrics see it: `network.transport`, `network.protocol.*` (frozen). */
export interface Network {
  readonly attributes: Attributes;
}

const IN_MEMORY: Network = Object.freeze({ attributes: Object.freeze({}) });
const PIPE: Network = Object.freeze({ attributes: Object.freeze({ [A.transport]: "pipe" }) });
/** HTTP networks by `network.protocol.version` (a handful: what Node's parser accepts). */
const HTTP = new Map<string | undefined, Network>();

/** The {@link Network} of `carrier` (one object per transport and HTTP version). */
export function networkOf(carrier: Carrier | undefined): Network {
  if (carrier === undefined) return IN_MEMORY;
  if (carrier === "pipe") return PIPE;
  const version = peerOf(carrier)?.httpVersion;
  let network = HTTP.get(version);
  if (network === undefined) {
    const attributes: Attributes = { [A.transport]: "tcp", [A.protocolName]: "http" };
    if (version !== undefined) attributes[A.networkVersion] = version;
    network = Object.freeze({ attributes: Object.freeze(attributes) });
    if (HTTP.size < 16) HTTP.set(version, network);
  }
  return network;
}

/** What a request's outbound spans share with it: `mcp.protocol.version`, `mcp.session.id`, the transport. */
export function baseAttributes(
  version: string | undefined,
  sessionId: string | undefined,
  network: Network,
): Attributes {
  const base: Attributes = {};
  if (version !== undefined) base[A.protocolVersion] = version;
  if (sessionId !== undefined) base[A.sessionId] = sessionId;
  const n = network.attributes;
  if (n[A.transport] !== undefined) base[A.transport] = n[A.transport];
  if (n[A.protocolName] !== undefined) base[A.protocolName] = n[A.protocolName];
  return base;
}

/** `client.address` and `client.port` of what carried a message (HTTP only), into `into`. */
export function clientAttributes(carrier: Carrier | undefined, into: Attributes): void {
  if (carrier === undefined || carrier === "pipe") return;
  // behind trusted proxies, the client they name (the handler's `trustProxy`), without a port
  const client = clientOf(carrier);
  if (client !== undefined) {
    into[A.clientAddress] = client.address;
    if (client.port !== undefined) into[A.clientPort] = client.port;
  }
}

/** A value as a span attribute: its JSON, or undefined when it has none (or a cycle). */
export function json(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** The task a result created: its id (2026-07-28 `resultType: "task"`, 2025-11-25 `task`). */
export function createdTask(result: Params | undefined): string | undefined {
  if (result === undefined) return undefined;
  if (result.resultType === "task") return shortString(result.taskId);
  return isObject(result.task) ? shortString(result.task.taskId) : undefined;
}
