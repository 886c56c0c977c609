import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { lineWhere, spawnProcess } from "../helpers.js";
import { meta, V } from "../modern-helpers.js";

const fixture = fileURLToPath(new URL("../fixtures/modern-stdio-server.js", import.meta.url));
const SUB = "io.modelcontextprotocol/subscriptionId";
const SERVER_META = { "io.modelcontextprotocol/serverInfo": { name: "modern-fixture", version: "1.0.0" } };

const line = (id: number | string, method: string, params: object = {}, caps: object = {}) =>
  `${JSON.stringify({ jsonrpc: "2.0", id, method, params: { _meta: meta(caps), ...params } })}\n`;

describe("2026-07-28 over stdio, in a real process", () => {
  it("serves a client that never initializes: discover, calls, input rounds, listen and cancel", async () => {
    const f = spawnProcess(fixture);
    f.child.stdin.write(line(1, "server/discover"));
    const discover = await lineWhere(f.lines, (m) => m.id === 1);
    expect(discover.result.supportedVersions[0]).toBe(V);
    expect(discover.result._meta).toEqual(SERVER_META);

    f.child.stdin.write(line(2, "tools/call", { name: "echo", arguments: { text: "x" } }));
    expect(await lineWhere(f.lines, (m) => m.id === 2)).toEqual({
      jsonrpc: "2.0",
      id: 2,
      result: { resultType: "complete", content: [{ type: "text", text: "x" }], _meta: SERVER_META },
    });

    f.child.stdin.write(line(3, "tools/call", { name: "greet" }, { elicitation: {} }));
    const round = await lineWhere(f.lines, (m) => m.id === 3);
    expect(round.result.resultType).toBe("input_required");
    const answer = { user_name: { action: "accept", content: { name: "Ann" } } };
    f.child.stdin.write(
      line(
        4,
        "tools/call",
        { name: "greet", inputResponses: answer, requestState: round.result.requestState },
        {
          elicitation: {},
        },
      ),
    );
    expect((await lineWhere(f.lines, (m) => m.id === 4)).result.content).toEqual([
      { type: "text", text: "Hello, Ann!" },
    ]);

    f.child.stdin.write(
      line("listen-1", "subscriptions/listen", { notifications: { toolsListChanged: true } }),
    );
    expect(await lineWhere(f.lines, (m) => m.method === "notifications/subscriptions/acknowledged")).toEqual({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { _meta: { [SUB]: "listen-1" }, notifications: { toolsListChanged: true } },
    });
    f.child.stdin.write(line(5, "tools/call", { name: "change" }));
    expect(await lineWhere(f.lines, (m) => m.method === "notifications/tools/list_changed")).toEqual({
      jsonrpc: "2.0",
      method: "notifications/tools/list_changed",
      params: { _meta: { [SUB]: "listen-1" } },
    });
    f.child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "listen-1" } })}\n`,
    );
    f.child.stdin.write(line(6, "tools/call", { name: "change" }));
    await lineWhere(f.lines, (m) => m.id === 6);
    f.child.stdin.end();
    expect(await f.exited).toBe(0);
    const all = f.lines.map((l) => JSON.parse(l));
    // the cancelled listen is never answered, and hears nothing more
    expect(all.filter((m) => m.id === "listen-1")).toEqual([]);
    expect(all.filter((m) => m.method === "notifications/tools/list_changed")).toHaveLength(1);
    // no request ever went to the client
    expect(all.filter((m) => m.method !== undefined && m.id !== undefined)).toEqual([]);
    expect(f.rest()).toBe("");
  });

  it("ends an open listen with its result when input ends, then exits 0", async () => {
    const f = spawnProcess(fixture);
    f.child.stdin.write(
      line("L", "subscriptions/listen", { notifications: { resourceSubscriptions: ["test://watched"] } }),
    );
    await lineWhere(f.lines, (m) => m.method === "notifications/subscriptions/acknowledged");
    f.child.stdin.end();
    expect(await f.exited).toBe(0);
    expect(JSON.parse(f.lines.at(-1)!)).toEqual({
      jsonrpc: "2.0",
      id: "L",
      result: { resultType: "complete", _meta: { ...SERVER_META, [SUB]: "L" } },
    });
  });
});
