// picomcp/proxy under a storm of the remote's list changes: one listing in flight per kind and one more
// after it, whatever the number of notifications, and the list it keeps (and announces) is the newest.
// A picomcp server over Streamable HTTP upstream (its changes reach the proxy over a 2026-07-28 listen).
// The storm's listings wait on a gate until the proxy has heard every change (a change of resources sent
// after them, heard in order, tells when), so the count does not depend on the machine's speed.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LocalBus } from "../src/bus.js";
import { type NodeServer, serve } from "../src/http/node.js";
import { McpServer } from "../src/index.js";
import { createProxy, type ProxyServer } from "../src/proxy/index.js";
import { rawPeer } from "./helpers.js";

let remoteHttp: NodeServer;
let proxy: ProxyServer;
const listings = { tools: 0, prompts: 0 };

/** A promise and what settles it. */
function settled() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Set by the storm: the gate its listings wait on, and whether the proxy listed resources since. */
let storm: { gate: ReturnType<typeof settled>; heard: ReturnType<typeof settled> } | undefined;

beforeEach(async () => {
  listings.tools = 0;
  listings.prompts = 0;
  storm = undefined;
  const bus = new LocalBus();
  const remote = new McpServer({ name: "pico-upstream", version: "3.0.0", bus, onError: () => {} });
  remote.tool("storm", {
    run: () => {
      storm = { gate: settled(), heard: settled() };
      for (let i = 0; i < 25; i++) {
        remote.tool(`t${i}`, { run: () => "" });
        remote.prompt(`p${i}`, { get: () => "" });
      }
      // the server tells one change per tick: published on its bus, each is a notification of its own
      for (let i = 0; i < 50; i++) {
        bus.publish({ type: "list_changed", kind: "tools" });
        bus.publish({ type: "list_changed", kind: "prompts" });
      }
      // after the registrations' own change (told a microtask after the first of them): resources, last
      queueMicrotask(() => bus.publish({ type: "list_changed", kind: "resources" }));
      return "stormed";
    },
  });
  remote.prompt("first", { get: () => "" });
  remote.resource("marker://storm", { read: () => "" });
  remote.use({
    id: "test/counter",
    wrap: {
      "tools/list": async (_p, _ctx, next) => {
        listings.tools++;
        await storm?.gate.promise;
        return next();
      },
      "prompts/list": async (_p, _ctx, next) => {
        listings.prompts++;
        await storm?.gate.promise;
        return next();
      },
      "resources/list": (_p, _ctx, next) => {
        storm?.heard.resolve();
        return next();
      },
    },
  });
  remoteHttp = await serve(remote, { port: 0, hostname: "127.0.0.1" });
  proxy = await createProxy({ url: remoteHttp.url }, { onError: () => {} });
});
afterEach(async () => {
  await proxy.shutdown();
  await remoteHttp.close();
});

describe("a burst of 50 list_changed notifications from the remote", () => {
  it("runs two listings per kind, and keeps the newest lists", async () => {
    const peer = rawPeer(proxy);
    await peer.initialize();
    expect(listings).toEqual({ tools: 1, prompts: 1 }); // at start
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "storm", arguments: {} } };
    expect(await peer.send(call)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: "stormed" }] },
    });
    // the proxy lists resources once it has heard every change before: the storm's listings may go on
    await storm!.heard.promise;
    storm!.gate.resolve();
    const names = async (method: string, key: string) =>
      (
        (await peer.send({ jsonrpc: "2.0", id: 2, method, params: {} })).result[key] as { name: string }[]
      ).map((t) => t.name);
    await expect.poll(() => names("tools/list", "tools")).toHaveLength(26);
    await expect.poll(() => names("prompts/list", "prompts")).toHaveLength(26);
    // the newest list is kept and announced
    expect(await names("tools/list", "tools")).toEqual([
      "storm",
      ...Array.from({ length: 25 }, (_, i) => `t${i}`),
    ]);
    await expect
      .poll(() => peer.sent.filter((m) => m.method === "notifications/tools/list_changed").length)
      .toBeGreaterThan(0);
    // one listing in flight when the storm began, one more after it for all the changes heard meanwhile
    await expect.poll(() => listings.tools + listings.prompts).toBeGreaterThanOrEqual(6);
    expect(listings).toEqual({ tools: 3, prompts: 3 });
  });
});
