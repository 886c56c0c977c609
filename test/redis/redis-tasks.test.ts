// Tasks across instances, on a real redis-server: three picomcp processes (A, B, C), each with a
// RedisTaskStore of its own, behind a round-robin proxy. A task started on A is answered through B
// and read through C while B waits for it; a cancel through C stops the handler on A; an instance
// killed mid-task has its task failed once its lease runs out; Redis restarted loses no record.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  type Instance,
  SseMessages,
  startInstance,
  startProxy,
  startRedis,
  until,
  withRedisServer,
} from "../redis-helpers.js";

const SCRIPT = fileURLToPath(new URL("../fixtures/redis-task-instance.js", import.meta.url));
const V = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const RELATED = "io.modelcontextprotocol/related-task";
const SERVER_META = { "io.modelcontextprotocol/serverInfo": { name: "tasks", version: "1.0.0" } };
const JSON_SSE = { accept: "application/json, text/event-stream", "content-type": "application/json" };
/** The test's lease: short, so that a killed instance's task fails within a few seconds. */
const LEASE_MS = 2000;
const RENEW_MS = 400;
const [A, B, C] = [0, 1, 2];

let dir: string;
let port: number;
let redis: { stop(): Promise<void> };
const instances: Instance[] = [];
let proxy: { url: string; close(): Promise<void> };

beforeAll(async () => {
  if (!withRedisServer) return;
  // the records must outlive a restart of this redis-server: every write is in its append-only file
  dir = mkdtempSync(join(tmpdir(), "picomcp-tasks-"));
  port = await freePort();
  redis = await startRedis(port, dir);
  const env = {
    REDIS_URL: `redis://127.0.0.1:${port}`,
    LEASE_MS: String(LEASE_MS),
    RENEW_MS: String(RENEW_MS),
  };
  instances.push(...(await Promise.all(["A", "B", "C"].map((n) => startInstance(n, env, SCRIPT)))));
  proxy = await startProxy(
    instances.map((i) => i.url),
    false,
  );
}, 30_000);

afterAll(async () => {
  await proxy?.close();
  await Promise.all(instances.map((i) => i.stop()));
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The `_meta` of a 2026-07-28 request from a client with the tasks extension and elicitation. */
const META = {
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS]: {} }, elicitation: {} },
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
};

let ids = 0;

/** A POST through the proxy to instance `to`, as `user`. */
function post(to: number, body: object, headers: { [k: string]: string }, user: string) {
  return fetch(proxy.url, {
    method: "POST",
    headers: { ...JSON_SSE, ...headers, "x-to": String(to), "x-user": user },
    body: JSON.stringify(body),
  });
}

/** The JSON-RPC answer of a response, JSON or SSE. */
async function answerOf(res: Response, id: number): Promise<any> {
  if (!res.headers.get("content-type")?.includes("text/event-stream")) return res.json();
  const sse = new SseMessages(res);
  await sse.until((m) => m.some((x) => x.id === id), 60_000);
  void sse.close();
  return sse.messages.find((x) => x.id === id);
}

/** A 2026-07-28 request to instance `to`: its answer, with the instance that served it. */
async function modern(to: number, method: string, params: object, user = "ada") {
  const id = ++ids;
  const headers: { [k: string]: string } = { "mcp-protocol-version": V, "mcp-method": method };
  // the header mirrors the body: the tool's name, or the task's id
  const { name, taskId } = params as { name?: string; taskId?: string };
  if (name ?? taskId) headers["mcp-name"] = (name ?? taskId)!;
  const res = await post(
    to,
    { jsonrpc: "2.0", id, method, params: { _meta: META, ...params } },
    headers,
    user,
  );
  expect(res.headers.get("x-backend")).toBe(String(to));
  return { status: res.status, answer: await answerOf(res, id) };
}

/** The task as `tasks/get` through instance `to` shows it. */
async function read(to: number, taskId: string, user = "ada") {
  return (await modern(to, "tasks/get", { taskId }, user)).answer;
}

/** A 2025-11-25 session of `user` on instance `to`: a function that sends it a request. */
async function session(to: number, user = "ada") {
  const v = { "mcp-protocol-version": "2025-11-25" };
  const init = await post(
    to,
    {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    },
    v,
    user,
  );
  const sid = init.headers.get("mcp-session-id")!;
  await init.text();
  const headers = { ...v, "mcp-session-id": sid };
  const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
  expect((await post(to, initialized, headers, user)).status).toBe(202);
  return async (method: string, params: object) => {
    const id = ++ids;
    return answerOf(await post(to, { jsonrpc: "2.0", id, method, params }, headers, user), id);
  };
}

/** A 2026-07-28 listen on instance `to` for the tasks `taskIds`, acknowledged. */
async function listen(to: number, taskIds: string[]): Promise<SseMessages> {
  const id = ++ids;
  const headers = { "mcp-protocol-version": V, "mcp-method": "subscriptions/listen" };
  const body = {
    jsonrpc: "2.0",
    id,
    method: "subscriptions/listen",
    params: { _meta: META, notifications: { taskIds } },
  };
  const res = await post(to, body, headers, "ada");
  expect(res.status).toBe(200);
  const sse = new SseMessages(res);
  await sse.until((m) => m.length === 1);
  expect(sse.messages[0].method).toBe("notifications/subscriptions/acknowledged");
  return sse;
}

/** The statuses a listen stream heard for `taskId`, in order. */
const heard = (messages: any[], taskId: string) =>
  messages
    .filter((m) => m.method === "notifications/tasks" && m.params.taskId === taskId)
    .map((m) => m.params.status);

/** Starts tool `name` as a task on instance `to`; resolves with its id once its handler runs there. */
async function start(to: number, name: string): Promise<string> {
  const { answer } = await modern(to, "tools/call", { name, arguments: {} });
  expect(answer.result?.resultType).toBe("task");
  const { taskId } = answer.result;
  await until(() => instances[to]!.stderr.includes(`started ${taskId}`), 15_000, `${name} to start`);
  return taskId;
}

const unknown = (taskId: string) => ({ code: -32602, message: `Unknown task: ${taskId}`, data: { taskId } });

describe.runIf(withRedisServer)("tasks across three instances", () => {
  it("a task started on A is answered through B and read through C, while B waits for its result", async () => {
    const taskId = await start(A, "approve");
    await until(async () => (await read(C, taskId)).result?.status === "input_required");
    const asking = await read(C, taskId);
    expect(asking.result).toEqual({
      taskId,
      status: "input_required",
      statusMessage: "started on A",
      createdAt: expect.any(String),
      lastUpdatedAt: expect.any(String),
      ttlMs: 3_600_000,
      pollIntervalMs: 1000,
      inputRequests: {
        approve: {
          method: "elicitation/create",
          params: { message: "Approve?", requestedSchema: { type: "object", properties: {} } },
        },
      },
      resultType: "complete",
      _meta: SERVER_META,
    });
    // B waits twice: a 2026-07-28 listen stream, and a 2025-11-25 session's tasks/result
    const stream = await listen(B, [taskId]);
    const onB = await session(B);
    const result = onB("tasks/result", { taskId });
    const update = await modern(B, "tasks/update", {
      taskId,
      inputResponses: { approve: { action: "accept", content: {} } },
    });
    expect(update.answer.result).toEqual({ resultType: "complete", _meta: SERVER_META });
    // tasks/update answers once A has resumed the handler and stored the change
    expect(instances[A]!.stderr).toContain(`resumed ${taskId}`);
    await until(async () => (await read(C, taskId)).result.status === "completed");
    expect((await read(C, taskId)).result.result).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "accept on A" }],
    });
    expect(await result).toEqual({
      jsonrpc: "2.0",
      id: expect.any(Number),
      result: { content: [{ type: "text", text: "accept on A" }], _meta: { [RELATED]: { taskId } } },
    });
    // each change heard once on B, though A made them
    await stream.until((m) => heard(m, taskId).includes("completed"));
    expect(heard(stream.messages, taskId)).toEqual(["working", "completed"]);
    await stream.close();
    // another principal's task is unknown on every instance, in the same words as an id never made
    for (const to of [A, B, C]) {
      expect((await read(to, taskId, "bob")).error).toEqual(unknown(taskId));
      expect((await modern(to, "tasks/cancel", { taskId }, "bob")).answer.error).toEqual(unknown(taskId));
      expect((await read(to, "no-such-task")).error).toEqual(unknown("no-such-task"));
    }
  });

  it("a cancel through C stops the handler on A before it answers; tasks/result waiting on B hears it", async () => {
    const taskId = await start(A, "hang");
    const onB = await session(B);
    const result = onB("tasks/result", { taskId });
    const cancel = await modern(C, "tasks/cancel", { taskId });
    expect(cancel.answer.result).toEqual({ resultType: "complete", _meta: SERVER_META });
    await until(() => instances[A]!.stderr.includes(`aborted ${taskId}`), 15_000, "the abort on A");
    expect(await result).toEqual({
      jsonrpc: "2.0",
      id: expect.any(Number),
      error: { code: -32603, message: "The task was cancelled" },
    });
    for (const to of [A, B, C]) expect((await read(to, taskId)).result.status).toBe("cancelled");
    // the handler's late return changes nothing: cancelled stays cancelled
    expect((await modern(B, "tasks/cancel", { taskId })).answer.result).toEqual({
      resultType: "complete",
      _meta: SERVER_META,
    });
  });

  it("Redis restarted mid-run loses no task record, and control still crosses instances", async () => {
    const running = await start(A, "hang");
    const done = await start(B, "approve");
    await modern(C, "tasks/update", { taskId: done, inputResponses: { approve: { action: "decline" } } });
    await until(async () => (await read(A, done)).result.status === "completed");
    const before = (await read(C, done)).result;
    await redis.stop();
    // meanwhile a task read is a clean internal error, never a made-up answer
    const down = await modern(B, "tasks/get", { taskId: done });
    const unreachable = { code: -32603, message: "Internal error: the task store is unreachable" };
    expect(down.answer.error).toEqual(unreachable);
    // and a task that cannot be stored is the same error, never Redis's own words in a tool result
    expect((await modern(A, "tools/call", { name: "hang", arguments: {} })).answer.error).toEqual(
      unreachable,
    );
    // every instance learns of the outage from its own calls (each tick renews its runner's lease)
    for (const i of instances)
      await until(
        () =>
          /picomcp\/redis: Redis is unreachable \(.+\); task methods fail until it is back/.test(i.stderr),
        30_000,
        "the outage seen",
      );
    redis = await startRedis(port, dir);
    // and says it is over once its calls answer again
    for (const i of instances)
      await until(
        () => i.stderr.includes("picomcp/redis: Redis is back; tasks are served again"),
        30_000,
        "Redis back",
      );
    expect((await read(C, done)).result).toEqual(before);
    // the running task was not failed for the outage: its instance renewed its lease once Redis was back
    expect((await read(B, running)).result).toMatchObject({
      status: "working",
      statusMessage: "hanging on A",
    });
    // a cancel through C reaches A through its channel, subscribed again
    expect((await modern(C, "tasks/cancel", { taskId: running })).answer.result).toEqual({
      resultType: "complete",
      _meta: SERVER_META,
    });
    await until(() => instances[A]!.stderr.includes(`aborted ${running}`), 15_000, "the abort on A");
  }, 60_000);

  it("an instance killed mid-task: its task fails once its lease runs out, heard once elsewhere", async () => {
    const taskId = await start(C, "hang");
    const stream = await listen(B, [taskId]);
    const killed = Date.now();
    instances[C]!.child.kill("SIGKILL");
    await until(async () => (await read(A, taskId)).result.status === "failed", 30_000, "the task to fail");
    // never before the lease had run out (the lease is on Redis's clock)
    expect(Date.now() - killed).toBeGreaterThanOrEqual(LEASE_MS - RENEW_MS);
    expect((await read(B, taskId)).result).toMatchObject({
      status: "failed",
      error: { code: -32603, message: "The server running the task went away" },
    });
    await stream.until((m) => heard(m, taskId).includes("failed"));
    expect(heard(stream.messages, taskId)).toEqual(["failed"]);
    await stream.close();
  }, 60_000);
});
