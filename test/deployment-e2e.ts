// Two picomcp instances (test/fixtures/deployment-instance.js, every store in Redis, on the client a user
// creates for the deployment, with no wrapper and no hash-tagged prefix) behind a round-robin proxy, on a
// real Redis Cluster or Sentinel set: every feature across instances, then through the deployment's faults,
// with nothing lost and events crossing instances again within seconds.
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { startCluster, startSentinel } from "./redis-deployments.js";
import { type Instance, SseMessages, startInstance, startProxy, until } from "./redis-helpers.js";

const SCRIPT = fileURLToPath(new URL("./fixtures/deployment-instance.js", import.meta.url));
const V = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const JSON_SSE = { accept: "application/json, text/event-stream", "content-type": "application/json" };
const meta = (capabilities: object = {}) => ({
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": { name: "e2e", version: "1" },
});
let nextId = 1;

type Cluster = Awaited<ReturnType<typeof startCluster>>;
type Sentinel = Awaited<ReturnType<typeof startSentinel>>;

/** The env of an instance on `d`: the client users create for it. */
function redisEnv(d: Cluster | Sentinel): { [k: string]: string } {
  if (d.kind === "cluster") return { REDIS_CLUSTER: d.rootNodes.map((n) => n.url).join(",") };
  const nodes = d.sentinelRootNodes.map((n) => `${n.host}:${n.port}`).join(",");
  return { REDIS_SENTINEL: `picomcp@${nodes}` };
}

/** The suite on a deployment `start` makes; `faults` runs its faults, each followed by `check`. */
export function deploymentE2e<D extends Cluster | Sentinel>(
  name: string,
  enabled: boolean,
  start: () => Promise<D>,
  faults: (d: D, check: (fault: string) => Promise<void>) => Promise<void>,
) {
  let d: D;
  const instances: Instance[] = [];
  let proxy: Awaited<ReturnType<typeof startProxy>>;

  beforeAll(async () => {
    if (!enabled) return;
    d = await start();
    for (const n of ["A", "B"]) instances.push(await startInstance(n, redisEnv(d), SCRIPT));
    proxy = await startProxy(
      instances.map((i) => i.url),
      false,
    );
  }, 60_000);

  afterAll(async () => {
    await proxy?.close();
    await Promise.all(instances.map((i) => i.stop()));
    await d?.stop();
  });

  /** A 2026-07-28 request to instance `to` (through the proxy): its status and body. */
  async function modern(
    to: number,
    method: string,
    params: { name?: string; taskId?: string; [k: string]: unknown },
    capabilities: object = {},
  ) {
    const name = params.name ?? params.taskId;
    const res = await fetch(proxy.url, {
      method: "POST",
      headers: {
        ...JSON_SSE,
        "mcp-protocol-version": V,
        "mcp-method": method,
        ...(name === undefined ? {} : { "mcp-name": name }),
        "x-to": String(to),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: nextId++,
        method,
        params: { _meta: meta(capabilities), ...params },
      }),
    });
    return { status: res.status, body: (await res.json()) as any };
  }
  const call = (to: number, tool: string, args: object = {}) =>
    modern(to, "tools/call", { name: tool, arguments: args });
  const withTasks = { extensions: { [TASKS]: {} } };

  /** A listen stream on instance `to` for `uri`, once acknowledged. */
  async function listen(to: number, uri: string) {
    const res = await fetch(proxy.url, {
      method: "POST",
      headers: {
        ...JSON_SSE,
        "mcp-protocol-version": V,
        "mcp-method": "subscriptions/listen",
        "x-to": String(to),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: `listen-${nextId++}`,
        method: "subscriptions/listen",
        params: { _meta: meta(), notifications: { resourceSubscriptions: [uri] } },
      }),
    });
    expect(res.status).toBe(200);
    const stream = new SseMessages(res);
    await stream.until((m) => m.some((x) => x.method === "notifications/subscriptions/acknowledged"));
    return stream;
  }
  const updates = (messages: any[]) =>
    messages.filter((m) => m.method === "notifications/resources/updated").length;

  /** Milliseconds until a `resourceUpdated` made on A is heard on a listen stream held by B. */
  async function crossing(uri: string): Promise<number> {
    const began = Date.now();
    let stream: SseMessages | undefined;
    await until(
      async () => {
        stream = await listen(1, uri).catch(() => undefined);
        return stream !== undefined;
      },
      20_000,
      "a listen stream on B",
    );
    try {
      await until(
        async () => {
          await call(0, "touch", { uri }).catch(() => undefined);
          return stream!
            .until((m) => updates(m) > 0, 500)
            .then(
              () => true,
              () => false,
            );
        },
        20_000,
        `an update made on A heard on B (${uri})`,
      );
      return Date.now() - began;
    } finally {
      await stream!.close();
    }
  }

  /** Opens a 2025-11-25 session through the proxy: its id. */
  async function initialize(): Promise<string> {
    const res = await fetch(proxy.url, {
      method: "POST",
      headers: JSON_SSE,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      }),
    });
    expect(res.status).toBe(200);
    await res.body?.cancel();
    return res.headers.get("mcp-session-id")!;
  }

  /** A tool call of session `sid` on instance `to`: its status (a 404 is a session lost). */
  async function sessionCall(sid: string, to: number): Promise<number> {
    const res = await fetch(proxy.url, {
      method: "POST",
      headers: {
        ...JSON_SSE,
        "mcp-session-id": sid,
        "mcp-protocol-version": "2025-11-25",
        "x-to": String(to),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: nextId++,
        method: "tools/call",
        params: { name: "work", arguments: {} },
      }),
    });
    await res.body?.cancel();
    if (res.status === 404) throw new Error(`session ${sid} was lost`);
    return res.status;
  }

  /** A task started on A and cancelled through B: whether the cancel reached it, and what B reads next. */
  async function cancelAcross(): Promise<string> {
    const created = await modern(0, "tools/call", { name: "forever", arguments: {} }, withTasks);
    expect(created.body.result.resultType).toBe("task");
    const taskId = created.body.result.taskId as string;
    const cancelled = await modern(1, "tasks/cancel", { taskId }, withTasks);
    // 2026-07-28: an empty result once the runner has it
    expect(cancelled.body.result?.resultType, JSON.stringify(cancelled.body)).toBe("complete");
    const read = await modern(1, "tasks/get", { taskId }, withTasks);
    return read.body.result.status;
  }

  describe.runIf(enabled)(name, () => {
    it("serves every feature across two instances: sessions, questions, subscriptions, listen, tasks, rates", async () => {
      // a 2025-11-25 session of the official SDK client, each request on another instance
      const heard: string[] = [];
      const client = new Client({ name: "sdk-v1", version: "1.0.0" }, { capabilities: { elicitation: {} } });
      client.setRequestHandler(ElicitRequestSchema, async () => ({
        action: "accept",
        content: { c: "blue" },
      }));
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void heard.push(n.params.uri));
      await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain("forever");
        const asked = await client.callTool({ name: "ask", arguments: {} });
        expect((asked.content as { text: string }[])[0]!.text).toMatch(/^[AB]: accept \{"c":"blue"\}$/);
        await client.subscribeResource({ uri: "note://session" });
        await until(
          async () => {
            await call(0, "touch", { uri: "note://session" });
            await call(1, "touch", { uri: "note://session" });
            return heard.length > 0;
          },
          10_000,
          `the session to hear an update: ${instances.map((i) => i.stderr).join(" | ")}`,
        );
      } finally {
        await client.close();
      }
      // 2026-07-28: an update made on A reaches a listen stream on B
      const listener = await listen(1, "note://listen");
      await call(0, "touch", { uri: "note://listen" });
      await listener.until((m) => updates(m) > 0);
      await listener.close();
      // tasks: each started on A, cancelled through B, and read as cancelled right after, every time
      const statuses: string[] = [];
      for (let i = 0; i < 10; i++) statuses.push(await cancelAcross());
      expect(statuses).toEqual(Array(10).fill("cancelled"));
      // one caller's rate budget (five a minute) is spent across both instances
      const served = [];
      for (let i = 0; i < 5; i++) served.push((await call(i % 2, "metered")).status);
      expect(served).toEqual([200, 200, 200, 200, 200]);
      const refused = await call(1, "metered");
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe(-32000);
    }, 60_000);

    it("comes through the deployment's faults: nothing lost, events crossing again within seconds", async () => {
      const figures: string[] = [];
      // sessions opened before the faults, spread over the deployment by their ids
      const sessions = await Promise.all(Array.from({ length: 12 }, () => initialize()));
      for (const [i, sid] of sessions.entries()) expect(await sessionCall(sid, i % 2)).toBe(200);
      const running = await modern(0, "tools/call", { name: "forever", arguments: {} }, withTasks);
      expect(running.body.result?.resultType, JSON.stringify(running.body)).toBe("task");
      const taskId = running.body.result.taskId as string;
      await faults(d, async (fault) => {
        const began = Date.now();
        // the bus crosses again, task records survived (the lease renewed by A), control reaches A
        const ms = await crossing(`note://${fault.replaceAll(" ", "-")}`);
        await until(
          async () => (await modern(1, "tasks/get", { taskId }, withTasks)).body.result?.status === "working",
          20_000,
          `task ${taskId} read as working after ${fault}`,
        );
        // every session is served again, none lost (a 404 fails at once)
        for (const [i, sid] of sessions.entries())
          await until(
            async () => (await sessionCall(sid, i % 2)) === 200,
            20_000,
            `session ${sid} after ${fault}`,
          );
        expect(await cancelAcross()).toBe("cancelled");
        figures.push(
          `${fault}: an update crossed ${ms} ms after the deployment was healthy (all checks ${Date.now() - began} ms)`,
        );
      });
      console.log(`${name}: ${figures.join("; ")}`);
      for (const i of instances) expect(i.child.exitCode).toBeNull();
    }, 180_000);
  });
}
