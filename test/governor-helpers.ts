// Helpers of the governor tests: a server whose tools hold what a caller can hold (tasks that wait,
// requests that wait, questions to the client), behind an HTTP handler that knows callers by token.
import { afterEach } from "vitest";
import { createHttpHandler, type HttpHandler, type HttpHandlerOptions } from "../src/http/index.js";
import { type LimitsOptions, McpServer, type McpServerOptions } from "../src/index.js";
import { initBody, POST_HEADERS, post, URL_ } from "./http-helpers.js";

export const V = "2026-07-28";
export const TASKS = "io.modelcontextprotocol/tasks";
export const META = {
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": {},
};
export const WITH_TASKS = {
  ...META,
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} } },
};

/** A gate the holding tools wait on; `open()` lets every one of them finish. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

/** The server: `quick` and `hold` run as tasks, `wait` waits for its cancel or the gate, `ask2` asks twice. */
export function governed(limits?: LimitsOptions, options: Partial<McpServerOptions> = {}) {
  const g = gate();
  /** How many `wait` calls have started. */
  const seen = { waiting: 0 };
  const server = new McpServer({
    name: "gov",
    version: "1.0.0",
    onError: () => {},
    ...(limits ? { limits } : {}),
    ...options,
  });
  server.tool("quick", {
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      return "quick";
    },
  });
  server.tool("hold", {
    task: "optional",
    run: async (_a, ctx) => {
      await ctx.task();
      await g.opened;
      return "held";
    },
  });
  server.tool("wait", {
    run: (_a, ctx) =>
      new Promise<string>((resolve) => {
        seen.waiting++;
        void g.opened.then(() => resolve("waited"));
        ctx.signal.addEventListener("abort", () => resolve("cancelled"));
      }),
  });
  server.tool("echo", { run: (a: { text?: string }) => a.text ?? "" });
  server.tool("search", { run: () => "found" });
  server.tool("ask2", {
    run: async (_a, ctx) => {
      const schema = { type: "object" as const, properties: { n: { type: "string" } } };
      const [a, b] = await Promise.allSettled([
        ctx.elicit({ message: "A?", requestedSchema: schema }),
        ctx.elicit({ message: "B?", requestedSchema: schema }),
      ]);
      return `${a.status}/${b.status}`;
    },
  });
  server.resource("note://{id}", { read: ({ id }) => `note ${id}` });
  return { server, seen, ...g };
}

/** `Bearer <name>` is the principal `<name>`; no header is anonymous. */
export const byToken = (request: Request) => {
  const h = request.headers.get("authorization");
  return h?.startsWith("Bearer ") ? { token: h.slice(7), subject: h.slice(7) } : undefined;
};

const handlers: HttpHandler[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.close();
});

/** An HTTP handler of `server` that knows callers by their bearer token (closed after the test). */
export function httpOf(server: McpServer, options: HttpHandlerOptions = {}): HttpHandler {
  const handler = createHttpHandler(server, { authenticate: byToken, ...options });
  handlers.push(handler);
  return handler;
}

export const as = (who?: string): { [k: string]: string } => (who ? { authorization: `Bearer ${who}` } : {});

/** A 2026-07-28 POST of `method` by `who` (anonymous when undefined). */
export function modern(
  handler: HttpHandler,
  who: string | undefined,
  id: number,
  method: string,
  params: { [k: string]: unknown } = {},
  meta: object = META,
  headers: { [k: string]: string } = {},
): Promise<Response> {
  const base: { [k: string]: string } = {
    ...POST_HEADERS,
    "mcp-protocol-version": V,
    "mcp-method": method,
    ...as(who),
    ...headers,
  };
  const name = method === "resources/read" ? params.uri : (params.name ?? params.taskId);
  if (typeof name === "string") base["mcp-name"] = name;
  const body = { jsonrpc: "2.0", id, method, params: { _meta: meta, ...params } };
  return handler(new Request(URL_, { method: "POST", headers: base, body: JSON.stringify(body) }));
}

/** A 2025-11-25 POST on session `sid` by `who`. */
export function sessionPost(
  handler: HttpHandler,
  who: string | undefined,
  sid: string,
  body: unknown,
): Promise<Response> {
  return post(handler, body, { ...as(who), "mcp-session-id": sid });
}

/** Opens a 2025-11-25 session for `who`; its id. */
export async function openSession(
  handler: HttpHandler,
  who?: string,
  capabilities: object = {},
  headers: { [k: string]: string } = {},
): Promise<string> {
  const res = await post(handler, initBody("2025-11-25", capabilities), { ...as(who), ...headers });
  if (res.status !== 200) throw new Error(`initialize: ${res.status} ${await res.text()}`);
  await res.text();
  return res.headers.get("mcp-session-id")!;
}

/** The refusal body of the governor, as the wire carries it. */
export function refusal(
  id: number | undefined,
  limit: string,
  max: number,
  message: string,
  retryAfterMs: number,
  scope = "principal",
) {
  const error = { code: -32000, message, data: { limit, scope, max, retryAfterMs } };
  return id === undefined ? { jsonrpc: "2.0", error } : { jsonrpc: "2.0", id, error };
}

/** Resolves once `check` holds, polling on timers (a condition, never a fixed wait). */
export async function until(check: () => boolean | Promise<boolean>, what = "the condition"): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`${what} never held`);
}
