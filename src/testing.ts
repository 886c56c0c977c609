/**
 * `connect(server)`: an in-memory client, already initialized, for unit tests of your own server.
 * Every message goes through JSON text both ways, exactly as on a real wire. With
 * `protocolVersion: "2026-07-28"` it speaks the stateless revision instead: `_meta` on every request,
 * and input-required results answered and retried, as a client of that revision does.
 */
import type { Connection } from "./connection.js";
import type { ElicitResult, Root, SampleResult } from "./context.js";
import { META } from "./eras/stateless.js";
import { isStatelessVersion, LATEST_SESSION_VERSION } from "./eras/versions.js";
import { McpError } from "./errors.js";
import { encodeMessage } from "./jsonrpc.js";
import type { McpServer } from "./server.js";
import type {
  CallToolResult,
  ClientCapabilities,
  GetPromptResult,
  Implementation,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  LoggingLevel,
  ResourceContents,
} from "./types.js";

/** Options of {@link connect}. */
export interface TestClientOptions {
  /** The revision to ask for; "2026-07-28" sends `_meta` on every request instead of `initialize`. Default: 2025-11-25. */
  protocolVersion?: string;
  /** Default: `{}` plus the capabilities implied by the handlers given below. */
  capabilities?: ClientCapabilities;
  /** Default: `{ name: "picomcp-test-client", version: "0.0.0" }`. */
  clientInfo?: Implementation;
  /** Answers `elicitation/create`. */
  onElicit?: (params: { [key: string]: unknown }) => ElicitResult | Promise<ElicitResult>;
  /** Answers `sampling/createMessage`. */
  onSample?: (params: { [key: string]: unknown }) => SampleResult | Promise<SampleResult>;
  /** The roots to answer `roots/list` with. */
  roots?: Root[];
}

/** Which page of a list to ask for. */
export interface PageRequest {
  /** The `nextCursor` of the page before (undefined: the first page). Default: the first page. */
  cursor?: string | undefined;
}

/** What `complete` completes: a prompt by name, or a resource template by its URI template. */
export type CompletionRef = { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };

/** The argument to complete, and the ones already chosen. */
export interface CompletionRequest {
  /** The argument's (or template variable's) name. */
  argument: string;
  /** What the user has typed so far. */
  value: string;
  /** The arguments already chosen, sent as `context.arguments`. Default: none. */
  arguments?: { [key: string]: string } | undefined;
}

/** The answer of `completion/complete`. */
export interface CompletionResult {
  completion: { values: string[]; total?: number; hasMore?: boolean };
}

/**
 * An in-memory MCP client connected to a server. Each helper takes what it is about (a tool or prompt name,
 * a URI, a completion ref) first, and everything else as one object.
 */
export interface TestClient {
  /** The initialize result (2026-07-28: the `server/discover` result). */
  readonly initializeResult: { [key: string]: unknown };
  /** Every notification the server sent, in order. */
  readonly notifications: JsonRpcNotification[];
  /** The server-side connection. */
  readonly connection: Connection;
  /** Sends a request; resolves with its result, rejects with an `McpError` for an error answer. */
  request<T = { [key: string]: unknown }>(method: string, params?: { [key: string]: unknown }): Promise<T>;
  /** Sends raw JSON text, exactly as given, and resolves with the raw answer (or undefined). */
  send(text: string): Promise<unknown>;
  /** Sends a notification. */
  notify(method: string, params?: { [key: string]: unknown }): Promise<void>;
  /** `ping`. */
  ping(): Promise<{ [key: string]: unknown }>;
  /** `tools/list`, one page: `{ cursor }` asks for the page after the first. */
  listTools(page?: PageRequest): Promise<{ tools: { [key: string]: any }[]; nextCursor?: string }>;
  /** `tools/call` of the tool `name`; a failed tool is a result with `isError: true`, not a rejection. */
  callTool(name: string, args?: { [key: string]: unknown }): Promise<CallToolResult>;
  /** `resources/list`, one page. */
  listResources(page?: PageRequest): Promise<{ resources: { [key: string]: any }[]; nextCursor?: string }>;
  /** `resources/templates/list`, one page. */
  listResourceTemplates(
    page?: PageRequest,
  ): Promise<{ resourceTemplates: { [key: string]: any }[]; nextCursor?: string }>;
  /** `resources/read` of the concrete `uri`. */
  readResource(uri: string): Promise<{ contents: ResourceContents[] }>;
  /** `resources/subscribe` to `uri`; updates arrive in `notifications`. */
  subscribe(uri: string): Promise<void>;
  /** `resources/unsubscribe` from `uri`. */
  unsubscribe(uri: string): Promise<void>;
  /** `prompts/list`, one page. */
  listPrompts(page?: PageRequest): Promise<{ prompts: { [key: string]: any }[]; nextCursor?: string }>;
  /** `prompts/get` of the prompt `name`, with its string arguments. */
  getPrompt(name: string, args?: { [key: string]: string }): Promise<GetPromptResult>;
  /** `completion/complete` of one argument of a prompt or a resource template. */
  complete(ref: CompletionRef, request: CompletionRequest): Promise<CompletionResult>;
  /** `logging/setLevel`. */
  setLogLevel(level: LoggingLevel): Promise<void>;
  /** Resolves with the next notification of `method` that arrives (earlier ones are in `notifications`). */
  waitForNotification(method: string): Promise<JsonRpcNotification>;
  /** Closes the connection. */
  close(): void;
}

const wire = (m: JsonRpcMessage | JsonRpcMessage[]): any => JSON.parse(encodeMessage(m));
/** 2026-07-28: how many input rounds a request may take before its last result is returned as it is. */
const MAX_ROUNDS = 10;

/**
 * Connects an in-memory client to `server` and initializes it.
 * @example
 * const client = await connect(server);
 * expect(await client.callTool("add", { a: 1, b: 2 })).toEqual({ content: [{ type: "text", text: "3" }] });
 */
export async function connect(server: McpServer, options: TestClientOptions = {}): Promise<TestClient> {
  const notifications: JsonRpcNotification[] = [];
  const waiters: { method: string; resolve: (n: JsonRpcNotification) => void }[] = [];
  let nextId = 0;
  const capabilities: ClientCapabilities = { ...options.capabilities };
  if (options.onElicit) capabilities.elicitation ??= { form: {}, url: {} };
  if (options.onSample) capabilities.sampling ??= {};
  if (options.roots) capabilities.roots ??= { listChanged: true };

  const fromServer = async (raw: JsonRpcMessage) => {
    const m = wire(raw);
    if (typeof m.method === "string" && "id" in m) return answerServerRequest(m as JsonRpcRequest);
    if (typeof m.method === "string") {
      notifications.push(m);
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i]!.method === m.method) waiters.splice(i, 1)[0]!.resolve(m);
      }
    }
  };

  /** What the client answers to a request of the server (or an input request of 2026-07-28). */
  const answerFor = async (method: string, params: { [key: string]: unknown }): Promise<unknown> => {
    if (method === "elicitation/create" && options.onElicit) return options.onElicit(params);
    if (method === "sampling/createMessage" && options.onSample) return options.onSample(params);
    if (method === "roots/list" && options.roots) return { roots: options.roots };
    if (method === "ping") return {};
    throw new McpError(-32601, `Method not found: ${method}`);
  };

  const answerServerRequest = async (req: JsonRpcRequest) => {
    let response: JsonRpcResponse;
    try {
      const result = await answerFor(req.method, req.params ?? {});
      response = { jsonrpc: "2.0", id: req.id, result: result as { [key: string]: unknown } };
    } catch (e) {
      const err = e instanceof McpError ? e : new McpError(-32603, (e as Error).message);
      response = { jsonrpc: "2.0", id: req.id, error: { code: err.code, message: err.message } };
    }
    await server.handle(wire(response), connection);
  };

  const connection = server.connect({ send: (m) => void fromServer(m) });

  const send = async (text: string) => {
    const answer = await server.handle(JSON.parse(text), connection);
    return answer === undefined ? undefined : wire(answer);
  };

  const once = async <T>(method: string, params?: { [key: string]: unknown }): Promise<T> => {
    const msg: JsonRpcRequest = { jsonrpc: "2.0", id: ++nextId, method };
    if (params !== undefined) msg.params = params;
    const answer = (await send(encodeMessage(msg))) as JsonRpcResponse | undefined;
    if (answer === undefined) throw new Error(`No answer to ${method} (cancelled?)`);
    if ("error" in answer) throw new McpError(answer.error.code, answer.error.message, answer.error.data);
    return answer.result as T;
  };

  const stateless = isStatelessVersion(options.protocolVersion);
  const clientInfo = options.clientInfo ?? { name: "picomcp-test-client", version: "0.0.0" };
  let logLevel: LoggingLevel | undefined;

  /** 2026-07-28: the request with its `_meta`, retried with the answers while the server asks for input. */
  const request = async <T>(method: string, params?: { [key: string]: unknown }): Promise<T> => {
    if (!stateless) return once<T>(method, params);
    const meta: { [key: string]: unknown } = {
      [META.protocolVersion]: options.protocolVersion,
      [META.clientCapabilities]: capabilities,
      [META.clientInfo]: clientInfo,
    };
    if (logLevel !== undefined) meta[META.logLevel] = logLevel;
    let p: { [key: string]: unknown } = { ...params, _meta: { ...meta, ...(params?._meta as object) } };
    for (let round = 1; ; round++) {
      const result = await once<{ [key: string]: any }>(method, p);
      if (result.resultType !== "input_required" || round > MAX_ROUNDS) return result as T;
      const inputResponses: { [key: string]: unknown } = {};
      for (const [key, r] of Object.entries(result.inputRequests ?? {}) as [string, any][])
        inputResponses[key] = await answerFor(r.method, r.params ?? {});
      p = { ...p, inputResponses, requestState: result.requestState };
    }
  };

  const initializeResult = stateless
    ? await request<{ [key: string]: unknown }>("server/discover")
    : await request<{ [key: string]: unknown }>("initialize", {
        protocolVersion: options.protocolVersion ?? LATEST_SESSION_VERSION,
        capabilities,
        clientInfo,
      });
  if (!stateless) await server.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, connection);

  const empty = async (p: Promise<unknown>) => {
    await p;
  };
  const withCursor = (page?: PageRequest) =>
    page?.cursor === undefined ? undefined : { cursor: page.cursor };

  return {
    initializeResult,
    notifications,
    connection,
    request,
    send,
    notify: async (method, params) => {
      await server.handle(
        wire(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }),
        connection,
      );
    },
    ping: () => request("ping"),
    listTools: (page) => request("tools/list", withCursor(page)),
    callTool: (name, args) =>
      request("tools/call", args === undefined ? { name } : { name, arguments: args }),
    listResources: (page) => request("resources/list", withCursor(page)),
    listResourceTemplates: (page) => request("resources/templates/list", withCursor(page)),
    readResource: (uri) => request("resources/read", { uri }),
    subscribe: (uri) => empty(request("resources/subscribe", { uri })),
    unsubscribe: (uri) => empty(request("resources/unsubscribe", { uri })),
    listPrompts: (page) => request("prompts/list", withCursor(page)),
    getPrompt: (name, args) =>
      request("prompts/get", args === undefined ? { name } : { name, arguments: args }),
    complete: (ref, { argument, value, arguments: chosen }) => {
      const params: { [key: string]: unknown } = { ref, argument: { name: argument, value } };
      if (chosen !== undefined) params.context = { arguments: chosen };
      return request("completion/complete", params);
    },
    setLogLevel: async (level) => {
      // 2026-07-28 has no logging/setLevel: the level travels in each later request's _meta
      if (stateless) logLevel = level;
      else await empty(request("logging/setLevel", { level }));
    },
    waitForNotification: (method) => new Promise((resolve) => waiters.push({ method, resolve })),
    close: () => connection.close(),
  };
}
