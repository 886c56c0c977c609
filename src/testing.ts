/**
 * `connect(server)`: an in-memory client, already initialized, for unit tests of your own server.
 * Every message goes through JSON text both ways, exactly as on a real wire. With
 * `protocolVersion: "2026-07-28"` it speaks the stateless revision instead: `_meta` on every request,
 * and input-required results answered and retried, as a client of that revision does.
 */
import type { Connection } from "./connection.js";
import type { ElicitResult, Root, SampleResult } from "./context.js";
import { META } from "./eras/modern.js";
import { MODERN_VERSION } from "./eras/versions.js";
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

/** An in-memory MCP client connected to a server. */
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
  ping(): Promise<{ [key: string]: unknown }>;
  listTools(cursor?: string): Promise<{ tools: { [key: string]: any }[]; nextCursor?: string }>;
  callTool(name: string, args?: { [key: string]: unknown }): Promise<CallToolResult>;
  listResources(cursor?: string): Promise<{ resources: { [key: string]: any }[]; nextCursor?: string }>;
  listResourceTemplates(
    cursor?: string,
  ): Promise<{ resourceTemplates: { [key: string]: any }[]; nextCursor?: string }>;
  readResource(uri: string): Promise<{ contents: ResourceContents[] }>;
  subscribe(uri: string): Promise<void>;
  unsubscribe(uri: string): Promise<void>;
  listPrompts(cursor?: string): Promise<{ prompts: { [key: string]: any }[]; nextCursor?: string }>;
  getPrompt(name: string, args?: { [key: string]: string }): Promise<GetPromptResult>;
  complete(
    ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string },
    argument: { name: string; value: string },
    context?: { arguments?: { [key: string]: string } },
  ): Promise<{ completion: { values: string[]; total?: number; hasMore?: boolean } }>;
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

  const modern = options.protocolVersion === MODERN_VERSION;
  const clientInfo = options.clientInfo ?? { name: "picomcp-test-client", version: "0.0.0" };
  let logLevel: LoggingLevel | undefined;

  /** 2026-07-28: the request with its `_meta`, retried with the answers while the server asks for input. */
  const request = async <T>(method: string, params?: { [key: string]: unknown }): Promise<T> => {
    if (!modern) return once<T>(method, params);
    const meta: { [key: string]: unknown } = {
      [META.protocolVersion]: MODERN_VERSION,
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

  const initializeResult = modern
    ? await request<{ [key: string]: unknown }>("server/discover")
    : await request<{ [key: string]: unknown }>("initialize", {
        protocolVersion: options.protocolVersion ?? "2025-11-25",
        capabilities,
        clientInfo,
      });
  if (!modern) await server.handle({ jsonrpc: "2.0", method: "notifications/initialized" }, connection);

  const empty = async (p: Promise<unknown>) => {
    await p;
  };
  const withCursor = (cursor?: string) => (cursor === undefined ? undefined : { cursor });

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
    listTools: (cursor) => request("tools/list", withCursor(cursor)),
    callTool: (name, args) =>
      request("tools/call", args === undefined ? { name } : { name, arguments: args }),
    listResources: (cursor) => request("resources/list", withCursor(cursor)),
    listResourceTemplates: (cursor) => request("resources/templates/list", withCursor(cursor)),
    readResource: (uri) => request("resources/read", { uri }),
    subscribe: (uri) => empty(request("resources/subscribe", { uri })),
    unsubscribe: (uri) => empty(request("resources/unsubscribe", { uri })),
    listPrompts: (cursor) => request("prompts/list", withCursor(cursor)),
    getPrompt: (name, args) =>
      request("prompts/get", args === undefined ? { name } : { name, arguments: args }),
    complete: (ref, argument, context) =>
      request("completion/complete", context === undefined ? { ref, argument } : { ref, argument, context }),
    setLogLevel: async (level) => {
      // 2026-07-28 has no logging/setLevel: the level travels in each later request's _meta
      if (modern) logLevel = level;
      else await empty(request("logging/setLevel", { level }));
    },
    waitForNotification: (method) => new Promise((resolve) => waiters.push({ method, resolve })),
    close: () => connection.close(),
  };
}
