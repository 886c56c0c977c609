/**
 * Wire types of MCP and JSON-RPC, shaped as the newest revision has them. The era serializers
 * (`src/eras/`) strip what an older revision lacks, so handlers only ever build these shapes. And the
 * caller's principal, what state is bound to.
 */

/** Any JSON value. */
/** A request's or notification's params: a JSON object. */
export type Params = { [key: string]: unknown };

/** The empty result, and empty params (frozen: shared by every request). */
export const EMPTY: { readonly [key: string]: never } = Object.freeze({});

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };
/** A JSON-RPC request id. */
export type RequestId = string | number;
/** `_meta`: free-form metadata attached to a message or a primitive. */
export type Meta = { [key: string]: unknown };

/** A JSON-RPC request. */
export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: RequestId;
  method: string;
  params?: { [key: string]: unknown };
}
/** A JSON-RPC notification (no id, never answered). */
export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: { [key: string]: unknown };
}
/** A successful JSON-RPC response. */
export interface JsonRpcResultResponse {
  jsonrpc: "2.0";
  id: RequestId;
  result: { [key: string]: unknown };
}
/** A JSON-RPC error object. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}
/** A JSON-RPC error response; `id` is absent (or `null` for older revisions) when the request id was unreadable. */
export interface JsonRpcErrorResponse {
  jsonrpc: "2.0";
  id?: RequestId | null;
  error: JsonRpcErrorObject;
}
/** A JSON-RPC response. */
export type JsonRpcResponse = JsonRpcResultResponse | JsonRpcErrorResponse;
/** Any JSON-RPC message. */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** An icon for a server, tool, resource or prompt (2025-11-25 and later). */
export interface Icon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: "light" | "dark";
}

/** Name and version of a client or server. */
export interface Implementation {
  /** The programmatic name. */
  name: string;
  /** The version. */
  version: string;
  /** Display name (2025-06-18 and later). */
  title?: string;
  /** What it does (2025-11-25 and later). */
  description?: string;
  /** Icons (2025-11-25 and later). */
  icons?: Icon[];
  /** Its website (2025-11-25 and later). */
  websiteUrl?: string;
}

/** Who a piece of content is for. */
export type Role = "user" | "assistant";

/** Hints about how content is used or shown. */
export interface Annotations {
  audience?: Role[];
  priority?: number;
  /** ISO 8601 time of the last change (2025-06-18 and later). */
  lastModified?: string;
}

/** Text content. */
export interface TextContent {
  type: "text";
  text: string;
  annotations?: Annotations;
  _meta?: Meta;
}
/** An image, base64-encoded. */
export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: Meta;
}
/** Audio, base64-encoded (2025-03-26 and later). */
export interface AudioContent {
  type: "audio";
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: Meta;
}
/** What describes a resource wherever it appears: in a listing, a link, a registration. */
export interface ResourceDetails {
  /** Display name. */
  title?: string;
  /** What the resource holds. */
  description?: string;
  /** Content type of the resource. */
  mimeType?: string;
  /** `audience`, `priority` and `lastModified` hints. */
  annotations?: Annotations;
  /** Size in bytes of the raw contents. */
  size?: number;
  icons?: Icon[];
  _meta?: Meta;
}

/** A concrete resource, as `resources/list` shows it. */
export interface Resource extends ResourceDetails {
  uri: string;
  name: string;
}

/** A link to a resource, for the client to read when it needs it (2025-06-18 and later). */
export interface ResourceLink extends Resource {
  type: "resource_link";
}
/** Text contents of a resource. */
export interface TextResourceContents {
  uri: string;
  mimeType?: string;
  text: string;
  _meta?: Meta;
}
/** Binary contents of a resource, base64-encoded. */
export interface BlobResourceContents {
  uri: string;
  mimeType?: string;
  blob: string;
  _meta?: Meta;
}
/** Contents of a resource. */
export type ResourceContents = TextResourceContents | BlobResourceContents;
/** A resource embedded in a message. */
export interface EmbeddedResource {
  type: "resource";
  resource: ResourceContents;
  annotations?: Annotations;
  _meta?: Meta;
}
/** A block of content in a tool result or a prompt message. */
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;

/** Behaviour hints of a tool. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** The result of `tools/call`. */
export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Meta;
}

/** A message of a prompt. */
export interface PromptMessage {
  role: Role;
  content: ContentBlock;
}
/** The result of `prompts/get`. */
export interface GetPromptResult {
  description?: string;
  messages: PromptMessage[];
  _meta?: Meta;
}

/** What a client says it can do. */
export interface ClientCapabilities {
  experimental?: { [key: string]: object };
  roots?: { listChanged?: boolean };
  sampling?: { context?: object; tools?: object };
  elicitation?: { form?: object; url?: object };
  tasks?: object;
  extensions?: { [key: string]: object };
  [key: string]: unknown;
}

/** What the server says it can do. */
export interface ServerCapabilities {
  experimental?: { [key: string]: object };
  logging?: object;
  completions?: object;
  prompts?: { listChanged?: boolean };
  resources?: { subscribe?: boolean; listChanged?: boolean };
  tools?: { listChanged?: boolean };
  /** 2025-11-25: task-augmented requests (experimental). */
  tasks?: { list?: object; cancel?: object; requests?: { tools?: { call?: object } } };
  /** Extensions the server serves, by identifier, with their settings. */
  extensions?: { [id: string]: object };
}

/** Log levels of RFC 5424, from least to most severe. */
export type LoggingLevel =
  | "debug"
  | "info"
  | "notice"
  | "warning"
  | "error"
  | "critical"
  | "alert"
  | "emergency";

/** A value now, or a promise of it: what the request path returns, so that a synchronous handler costs no microtask. */
export type Awaitable<T> = T | Promise<T>;

/** Whether `v` is a JSON object: not null, not an array. */
export function isObject(v: unknown): v is { [key: string]: unknown } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Whether `v` is a promise or another thenable (what `await` would wait for). */
export function isPromiseLike(v: unknown): v is PromiseLike<unknown> {
  return (
    (typeof v === "object" || typeof v === "function") &&
    v !== null &&
    typeof (v as { then?: unknown }).then === "function"
  );
}

// What the server asks the client (elicitation, sampling, roots), as handlers see it

/** A form-mode elicitation: a flat object of primitive fields for the user to fill in. */
export interface ElicitFormParams {
  mode?: "form";
  message: string;
  requestedSchema: {
    type: "object";
    properties: { [key: string]: object };
    required?: string[];
    $schema?: string;
  };
}
/** A URL-mode elicitation (2025-11-25): the user completes an interaction on a web page. */
export interface ElicitUrlParams {
  mode: "url";
  message: string;
  url: string;
  /** Default: a random id. */
  elicitationId?: string;
}
/** The user's answer to an elicitation. */
export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: { [key: string]: string | number | boolean | string[] };
  _meta?: Meta;
}
/** A message for sampling. */
export interface SamplingMessage {
  role: Role;
  content: ContentBlock | ContentBlock[] | { type: string; [key: string]: unknown };
}
/** Parameters of `sampling/createMessage`. */
export interface SampleParams {
  messages: SamplingMessage[];
  maxTokens: number;
  systemPrompt?: string;
  temperature?: number;
  stopSequences?: string[];
  modelPreferences?: { [key: string]: unknown };
  includeContext?: "none" | "thisServer" | "allServers";
  metadata?: object;
  tools?: object[];
  toolChoice?: object;
  [key: string]: unknown;
}
/** What the client's model answered. */
export interface SampleResult {
  role: Role;
  content: unknown;
  model: string;
  stopReason?: string;
  [key: string]: unknown;
}
/** A root the client exposes. */
export interface Root {
  uri: string;
  name?: string;
  _meta?: Meta;
}

/**
 * Who a caller is: a user (a token's `sub`, with its issuer) or a client acting for itself (its
 * `client_id`, with its issuer). A user and a client of the same name are two principals.
 */
export interface Principal {
  /** `user` when the credentials name a subject, else `client`. */
  readonly kind: "user" | "client";
  /** The issuer that vouches for `id` (`AuthInfo.issuer`); undefined when the verifier did not say. */
  readonly issuer: string | undefined;
  /** The subject, or the client id. */
  readonly id: string;
  /**
   * The canonical key that sessions, request states, tasks and listen streams are bound to:
   * `<kind>:<issuer>:<id>`, with `%` and `:` percent-encoded in the issuer and the id, so that no two
   * principals share a key (`user:https%3A//as.example:alice`).
   */
  readonly key: string;
}

/** What of the credentials (`AuthInfo`) names a principal. */
export interface Credentials {
  readonly subject?: unknown;
  readonly clientId?: unknown;
  readonly issuer?: unknown;
  readonly [key: string]: unknown;
}

/** `%` and `:` percent-encoded: the parts of a key can then hold anything and still be told apart. */
function keyPart(s: string): string {
  return s.includes("%") || s.includes(":") ? s.replaceAll("%", "%25").replaceAll(":", "%3A") : s;
}

const named = (s: unknown): s is string => typeof s === "string" && s !== "";

/** The principal of verified credentials: the subject, else the client; undefined when they name neither (anonymous). */
export function principalFrom(auth: Credentials | undefined): Principal | undefined {
  if (auth === undefined) return undefined;
  const kind = named(auth.subject) ? "user" : named(auth.clientId) ? "client" : undefined;
  if (kind === undefined) return undefined;
  const id = (kind === "user" ? auth.subject : auth.clientId) as string;
  const issuer = named(auth.issuer) ? auth.issuer : undefined;
  return { kind, issuer, id, key: `${kind}:${keyPart(issuer ?? "")}:${keyPart(id)}` };
}

/** The canonical key of the caller's principal ({@link Principal.key}); undefined when unauthenticated or anonymous. */
export function principalOf(auth: Credentials | undefined): string | undefined {
  return principalFrom(auth)?.key;
}
