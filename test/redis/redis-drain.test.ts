// Draining an instance of shared 2025 sessions, on a real redis-server: its GET stream and a POST's
// stream resumed on it from another instance close at once with a `retry:` hint (the drain does not
// wait for the other instance's answer), the client resumes both elsewhere and misses nothing, and
// the session lives on; a request cut past the grace leaves its error where a resume elsewhere reads it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useRedis, withRedis } from "../redis-helpers.js";
import { gate, type SharedInstance, startSharedInstance } from "../redis-sessions-helpers.js";

const JSON_SSE = { accept: "application/json, text/event-stream", "content-type": "application/json" };
const V = "2025-11-25";
const AUTH = { authorization: "Bearer drain" };

let redis: { url: string; port: number; stop(): Promise<void> };
const instances: SharedInstance[] = [];

beforeAll(async () => {
  if (!withRedis) return;
  redis = await useRedis();
  for (const name of ["A", "B", "C"]) instances.push(await startSharedInstance(name, redis.url));
}, 30_000);

afterAll(async () => {
  await Promise.all(instances.map((i) => i.stop()));
  await redis?.stop();
});

const post = (i: number, body: unknown, headers: { [k: string]: string } = {}) =>
  fetch(instances[i]!.url, {
    method: "POST",
    headers: { ...JSON_SSE, "mcp-protocol-version": V, ...AUTH, ...headers },
    body: JSON.stringify(body),
  });
const get = (i: number, headers: { [k: string]: string }) =>
  fetch(instances[i]!.url, {
    headers: { accept: "text/event-stream", "mcp-protocol-version": V, ...AUTH, ...headers },
  });

/** The events of an SSE body, to its end: id, retry and data as written. */
async function events(res: Response): Promise<{ id?: string; retry?: number; data?: string }[]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((b) => b.trim() && !b.startsWith(":"))
    .map((block) => {
      const e: { id?: string; retry?: number; data?: string } = {};
      for (const line of block.split("\n")) {
        if (line.startsWith("id: ")) e.id = line.slice(4);
        else if (line.startsWith("retry: ")) e.retry = Number(line.slice(7));
        else if (line.startsWith("data: ")) e.data = line.slice(6);
      }
      return e;
    });
}

describe.runIf(withRedis)("draining an instance of shared sessions", () => {
  it("closes its GET stream and a POST's stream resumed on it with a retry hint; both resume elsewhere", async () => {
    const init = await post(0, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    const sid = init.headers.get("mcp-session-id")!;
    await init.text();
    const session = { "mcp-session-id": sid };
    // a POST on A that closes its stream at once and waits for a gate: resumed on B
    const first = await post(
      0,
      {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "later", arguments: { gate: "drain" } },
      },
      session,
    );
    const before = await events(first);
    const last = before.filter((e) => e.id).at(-1)!.id!;
    const resumedOnB = await get(1, { ...session, "last-event-id": last });
    expect(resumedOnB.status).toBe(200);
    // the session's GET stream on B too
    const getOnB = await get(1, session);
    expect(getOnB.status).toBe(200);
    // B drains: neither stream waits for A's answer (the gate is still shut)
    await instances[1]!.http.handler.drain({ graceMs: 20_000 });
    const [resumed, standalone] = await Promise.all([events(resumedOnB), events(getOnB)]);
    expect(resumed.at(-1)).toEqual({ retry: 1000 });
    expect(standalone.at(-1)).toEqual({ retry: 1000 });
    expect(standalone[0]).toEqual({
      id: expect.stringMatching(new RegExp(`^${sid}_g`)),
      retry: 1000,
      data: "",
    });
    // the client resumes the POST's stream on C and gets the rest, once A answers
    const resumedOnC = await get(2, { ...session, "last-event-id": last });
    expect(resumedOnC.status).toBe(200);
    gate("drain").open();
    const rest = (await events(resumedOnC)).filter((e) => e.data).map((e) => JSON.parse(e.data!));
    expect(rest).toEqual([
      { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "after" } },
      { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "answered on A" }] } },
    ]);
    // and the session lives on: its GET stream opens again on C, its requests are served
    const getOnC = await get(2, { ...session, "last-event-id": standalone[0]!.id! });
    expect(getOnC.status).toBe(200);
    await getOnC.body?.cancel();
    const where = await post(
      2,
      { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "where" } },
      session,
    );
    expect(await where.json()).toEqual({
      jsonrpc: "2.0",
      id: 8,
      result: { content: [{ type: "text", text: "C" }] },
    });
  });

  it("a request cut past the grace leaves its cut error in its stream: the client that resumes elsewhere reads it", async () => {
    const init = await post(0, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    const session = { "mcp-session-id": init.headers.get("mcp-session-id")! };
    await init.text();
    // a POST on A whose stream closes at once (the client is to resume it), and that never ends
    const first = await post(
      0,
      {
        jsonrpc: "2.0",
        id: 9,
        method: "tools/call",
        params: { name: "later", arguments: { gate: "never" } },
      },
      session,
    );
    const last = (await events(first)).filter((e) => e.id).at(-1)!.id!;
    await instances[0]!.http.handler.drain({ graceMs: 0 });
    const resumedOnC = await get(2, { ...session, "last-event-id": last });
    expect(resumedOnC.status).toBe(200);
    expect((await events(resumedOnC)).filter((e) => e.data).map((e) => JSON.parse(e.data!))).toEqual([
      {
        jsonrpc: "2.0",
        id: 9,
        error: {
          code: -32603,
          message: "Service Unavailable: the server shut down before the request finished",
        },
      },
    ]);
  });
});
