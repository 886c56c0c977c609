// RedisRateStore against a real redis-server: two picomcp processes share each caller's budget (a
// caller spends it on one instance and is refused on the other), callers keep budgets of their own,
// and while Redis is down each instance counts on its own, saying so once.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startRedis } from "./redis-helpers.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/rate-instance.js", import.meta.url));
const V = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface Instance {
  url: string;
  child: ChildProcess;
  stderr: string;
}

async function start(name: string, env: { [k: string]: string }): Promise<Instance> {
  const child = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, INSTANCE: name, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const instance: Instance = { child, stderr: "", url: "" };
  child.stderr!.on("data", (c: Buffer) => {
    instance.stderr += c;
  });
  instance.url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.once("exit", (code) =>
      reject(new Error(`instance ${name} exited with ${code}: ${instance.stderr}`)),
    );
    child.stdout!.on("data", (c: Buffer) => {
      out += c;
      if (out.includes("\n")) resolve(out.trim());
    });
  });
  return instance;
}

let redis: { stop(): Promise<void> } | undefined;
/** Stops redis-server once (its helper would wait forever for a second exit). */
async function stopRedis(): Promise<void> {
  const r = redis;
  redis = undefined;
  await r?.stop();
}
let shared: Instance[] = [];
let alone: Instance[] = [];

beforeAll(async () => {
  const port = await freePort();
  redis = await startRedis(port);
  const env = { REDIS_URL: `redis://127.0.0.1:${port}` };
  shared = await Promise.all([start("A", env), start("B", env)]);
  alone = await Promise.all([start("C", {}), start("D", {})]);
}, 30_000);

afterAll(async () => {
  for (const i of [...shared, ...alone]) {
    if (i.child.exitCode !== null || i.child.signalCode !== null) continue;
    const exited = once(i.child, "exit");
    i.child.kill("SIGKILL");
    await exited;
  }
  await stopRedis();
});

let nextId = 1;
async function echo(instance: Instance, who: string) {
  const id = nextId++;
  const res = await fetch(instance.url, {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      authorization: `Bearer ${who}`,
      "mcp-protocol-version": V,
      "mcp-method": "tools/call",
      "mcp-name": "echo",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "echo", arguments: {}, _meta: META },
    }),
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.json() };
}

describe("RedisRateStore: one budget per caller across replicas", () => {
  it("alice spends her burst of 3 on A and B, and is refused on either; bob still has his", async () => {
    const [a, b] = shared as [Instance, Instance];
    expect((await echo(a, "alice")).body.result.content[0].text).toBe("A");
    expect((await echo(b, "alice")).body.result.content[0].text).toBe("B");
    expect((await echo(a, "alice")).status).toBe(200);
    const refused = await echo(b, "alice");
    expect([refused.status, refused.retryAfter]).toEqual([
      429,
      String(Math.ceil(refused.body.error.data.retryAfterMs / 1000)),
    ]);
    expect(refused.body).toEqual({
      jsonrpc: "2.0",
      id: refused.body.id,
      error: {
        code: -32000,
        message: "Too Many Requests: this caller's rate of tools/call is spent",
        data: {
          limit: "rate",
          scope: "principal",
          max: 3,
          retryAfterMs: expect.any(Number),
          rules: ["tools/call"],
        },
      },
    });
    expect(refused.body.error.data.retryAfterMs).toBeGreaterThan(50_000);
    expect((await echo(a, "alice")).status).toBe(429);
    expect((await echo(b, "bob")).status).toBe(200);
  });

  it("without the shared store each instance has a budget of its own (what Redis fixes)", async () => {
    const [c, d] = alone as [Instance, Instance];
    for (let i = 0; i < 3; i++) expect((await echo(c, "alice")).status).toBe(200);
    expect((await echo(c, "alice")).status).toBe(429);
    expect((await echo(d, "alice")).status).toBe(200);
  });

  it("while Redis is down each instance counts on its own, and says so once", async () => {
    const [a] = shared as [Instance];
    await stopRedis();
    const first = await echo(a, "carol");
    expect(first.status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await echo(a, "carol")).status).toBe(200);
    expect((await echo(a, "carol")).status).toBe(429);
    const lines = a.stderr.split("\n").filter((l) => l.startsWith("picomcp/redis:"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^picomcp\/redis: Redis is unreachable \(.+\); each instance counts rate limits on its own until it is back$/,
    );
  });
});
