// Helpers of the shared-session tests: picomcp instances on one Redis (each its own server, Redis
// clients, bus and stores, on a port of its own that a restart keeps), and a round-robin proxy that
// sends every request to the next instance and records who served what.
import { once } from "node:events";
import { createServer, request as httpRequest, type Server } from "node:http";
import { createClient } from "redis";
import type { AuthInfo } from "../src/connection.js";
import { type NodeServer, serve } from "../src/http/node.js";
import { McpServer } from "../src/index.js";
import { RedisBus, RedisEventStore, RedisSessionStore } from "../src/redis/index.js";
import { RUN } from "./redis-helpers.js";

/** Gates the `later` tool waits on, by name: the test opens one with `open(name)`. */
const gates = new Map<string, { wait: Promise<void>; open: () => void }>();

/** The gate `name` (made on first use). */
export function gate(name: string): { wait: Promise<void>; open: () => void } {
  let g = gates.get(name);
  if (!g) {
    let open!: () => void;
    const wait = new Promise<void>((r) => (open = r));
    g = { wait, open };
    gates.set(name, g);
  }
  return g;
}

/** One instance: its server, its HTTP listener, and what stops it (a restart starts another on its port). */
export interface SharedInstance {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly server: McpServer;
  readonly http: NodeServer;
  /** The Redis commands this instance sent (a counting wrapper of its client). */
  readonly commands: string[];
  readonly log: string[];
  stop(): Promise<void>;
}

/** `Bearer <name>` names the principal `<name>`; no header is anonymous. */
export function authenticate(request: Request): AuthInfo | undefined {
  const h = request.headers.get("authorization");
  return h?.startsWith("Bearer ") ? { token: h.slice(7), subject: h.slice(7) } : undefined;
}

/** Counts the commands sent on a node-redis client (`sendCommand` underlies them all, scripts too). */
function counted<T extends object>(client: T, commands: string[]): T {
  return new Proxy(client, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function" || key === "on" || key === "duplicate" || key === "connect") {
        return typeof value === "function" ? value.bind(target) : value;
      }
      // the client bound to a call's deadline (picomcp/redis's Link) sends the call's commands
      if (key === "withCommandOptions")
        return (...args: unknown[]) =>
          counted((value as (...a: unknown[]) => object).apply(target, args), commands);
      return (...args: unknown[]) => {
        if (!["destroy", "isOpen", "isReady"].includes(String(key))) commands.push(String(key));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/**
 * Starts instance `name` on `redisUrl` (port 0: a free one; else that one, as a restart does). Its
 * tools: `ask` (an elicitation), `touch` (a resource update), `where` (which instance ran it).
 */
export async function startSharedInstance(
  name: string,
  redisUrl: string,
  port = 0,
  options: { sessionIdleMs?: number; maxSessionsPerPrincipal?: number } = {},
): Promise<SharedInstance> {
  const commands: string[] = [];
  const log: string[] = [];
  const raw = createClient({ url: redisUrl });
  raw.on("error", () => {});
  const client = counted(raw, commands);
  const bus = new RedisBus(client as never, {
    channel: `picomcp:changes:${RUN}`,
    log: (l) => void log.push(l),
  });
  await bus.ready;
  const server = new McpServer({ name: "shared", version: "1.0.0", bus, onError: () => {} });
  server.resource("note://{id}", {
    description: "a note",
    list: () => [{ uri: "note://a", name: "a" }],
    read: ({ id }) => `note ${id} on ${name}`,
  });
  server.tool("touch", {
    description: "announces that a note changed",
    input: { type: "object", properties: { uri: { type: "string" } }, required: ["uri"] },
    run: ({ uri }) => {
      server.resourceUpdated(uri);
      return name;
    },
  });
  server.tool("where", { description: "which instance ran it", run: () => name });
  server.tool("later", {
    description:
      "logs, closes its SSE stream (the client resumes it), waits for gate `gate`, logs and answers",
    input: { type: "object", properties: { gate: { type: "string" } }, required: ["gate"] },
    run: async ({ gate: g }, ctx) => {
      ctx.log("info", "before");
      http.handler.closeSseStream({ sessionId: ctx.sessionId!, requestId: ctx.requestId });
      await gate(g).wait;
      ctx.log("info", "after");
      return `answered on ${name}`;
    },
  });
  server.tool("ask", {
    description: "asks the user a question, and says what they answered and where",
    run: async (_a, ctx) => {
      ctx.log("info", `asking on ${name}`);
      const answer = await ctx.elicit({
        message: "Your name?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      });
      return `${JSON.stringify(answer.content ?? null)} asked on ${name}`;
    },
  });
  const http: NodeServer = await serve(server, {
    port,
    authenticate,
    sessions: new RedisSessionStore(client as never, {
      bus,
      prefix: `picomcp:session:${RUN}:`,
      log: (l) => void log.push(l),
    }),
    eventStore: new RedisEventStore(client as never, {
      prefix: `picomcp:events:${RUN}:`,
      log: (l) => void log.push(l),
    }),
    ...options,
  });
  const bound = new URL(http.url).port;
  return {
    name,
    port: Number(bound),
    url: http.url,
    server,
    http,
    commands,
    log,
    async stop() {
      await http.close();
      bus.close();
      raw.destroy();
    },
  };
}

/** What the proxy saw of one request: the instance it went to, its method and status, and the JSON-RPC method(s) it carried. */
export interface Served {
  readonly to: number;
  readonly method: string;
  readonly status: number;
  readonly rpc: string;
  /** The request's `Last-Event-ID`, if any. */
  readonly last?: string;
}

/**
 * A proxy on 127.0.0.1 that sends each request to the next of `ports` in turn (so that two
 * requests in a row never reach the same instance), and records each in `served`.
 */
export async function startRoundRobin(ports: readonly number[]): Promise<{
  url: string;
  served: Served[];
  close(): Promise<void>;
}> {
  let next = 0;
  const served: Served[] = [];
  const server: Server = createServer((req, res) => {
    const to = next++ % ports.length;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      let rpc = "";
      try {
        const m = JSON.parse(body.toString() || "null");
        rpc = (Array.isArray(m) ? m : [m])
          .map((x) => x?.method ?? (x?.id !== undefined ? "answer" : ""))
          .join(",");
      } catch {
        // not JSON: recorded without
      }
      const headers = { ...req.headers, host: `127.0.0.1:${ports[to]}` };
      const upstream = httpRequest(
        { host: "127.0.0.1", port: ports[to], path: req.url, method: req.method, headers },
        (answer) => {
          const last = req.headers["last-event-id"];
          served.push({
            to,
            method: req.method!,
            status: answer.statusCode!,
            rpc,
            ...(typeof last === "string" ? { last } : {}),
          });
          res.writeHead(answer.statusCode!, { ...answer.headers, "x-backend": String(to) });
          answer.pipe(res);
          // an instance that goes away mid-stream breaks the client's stream too, as a balancer does
          answer.on("close", () => {
            if (!answer.complete) res.destroy();
          });
        },
      );
      upstream.on("error", () => {
        served.push({ to, method: req.method!, status: 502, rpc });
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      res.on("close", () => upstream.destroy());
      upstream.end(body);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    served,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
