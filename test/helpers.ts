import { spawn } from "node:child_process";
import type { AuthInfo, Connection } from "../src/connection.js";
import { encodeMessage } from "../src/jsonrpc.js";
import type { McpServer } from "../src/server.js";
import type { JsonRpcMessage } from "../src/types.js";

/** A raw JSON-RPC peer: sends objects or text, returns the exact wire answer, records what the server sent. */
export function rawPeer(server: McpServer, auth?: AuthInfo) {
  const sent: any[] = [];
  const connection: Connection = server.connect({
    send: (m: JsonRpcMessage) => void sent.push(JSON.parse(encodeMessage(m))),
    ...(auth ? { auth } : {}),
  });
  const send = async (message: unknown) => {
    const answer = await server.handle(
      typeof message === "string" ? JSON.parse(message) : message,
      connection,
    );
    return answer === undefined ? undefined : JSON.parse(encodeMessage(answer));
  };
  const initialize = async (protocolVersion = "2025-11-25", capabilities: object = {}) => {
    const answer = await send({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion, capabilities, clientInfo: { name: "raw", version: "1" } },
    });
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return answer;
  };
  return { connection, sent, send, initialize };
}

/** Resolves after pending microtasks and one macrotask. */
export const tick = () => new Promise((r) => setTimeout(r, 0));

/** Spawns a Node script and collects its stdout lines. */
export function spawnProcess(script: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let buf = "";
  let stderr = "";
  child.stdout.on("data", (c) => {
    buf += c.toString("utf8");
    let nl = buf.indexOf("\n");
    while (nl !== -1) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      nl = buf.indexOf("\n");
    }
  });
  child.stderr.on("data", (c) => (stderr += c));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return { child, lines, exited, stderr: () => stderr, rest: () => buf };
}

/** Resolves once `lines` holds a line for which `match` is true (polled; the test's timeout bounds it). */
export async function lineWhere(lines: string[], match: (m: any) => boolean): Promise<any> {
  for (;;) {
    for (const l of lines) {
      const m = JSON.parse(l);
      if (match(m)) return m;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The rejections left unhandled while `run` runs (and two ticks after). */
export async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    await run();
    await tick();
    await tick();
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
  return unhandled;
}

/** A tool that asks twice and awaits the answers one by one: a failure of the first leaves the second. */
export function twoQuestions(s: McpServer, task: boolean) {
  const schema = { type: "object" as const, properties: {} };
  s.tool("two", {
    ...(task ? { task: "optional" as const } : {}),
    run: async (_a, ctx) => {
      if (task) await ctx.task();
      const a = ctx.elicit({ message: "A?", requestedSchema: schema }, { key: "a" });
      const b = ctx.elicit({ message: "B?", requestedSchema: schema }, { key: "b" });
      await a;
      await b;
      return "both";
    },
  });
}
