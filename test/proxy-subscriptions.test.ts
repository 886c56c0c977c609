// picomcp/proxy's subscriptions are counted across its sessions: the remote (a picomcp server over
// Streamable HTTP, which the proxy subscribes through a 2026-07-28 listen) stays subscribed to a URI
// while some session wants it, and is re-listened without it when the last one unsubscribes or ends;
// each caller's subscriptions count against its `subscriptionBytes` share. Raw JSON-RPC downstream.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type NodeServer, serve } from "../src/http/node.js";
import { McpServer } from "../src/index.js";
import { createProxy, type ProxyServer } from "../src/proxy/index.js";
import { rawPeer } from "./helpers.js";

let remoteHttp: NodeServer;
let proxy: ProxyServer;
/** The remote's open listens that name resources: what it is subscribed to now. */
const listens = new Set<string[]>();
const subscribedNow = () => [...new Set([...listens].flat())].sort();

beforeEach(async () => {
  listens.clear();
  const remote = new McpServer({ name: "pico-upstream", version: "3.0.0", onError: () => {} });
  for (const name of ["a", "b", "c"]) remote.resource(`test://${name}`, { read: () => name });
  remote.use({
    id: "test/listens",
    wrap: {
      "subscriptions/listen": async (p: any, _ctx, next) => {
        const uris: string[] | undefined = p.notifications?.resourceSubscriptions;
        if (!uris?.length) return next();
        listens.add(uris);
        try {
          return await next();
        } finally {
          listens.delete(uris);
        }
      },
    },
  });
  remoteHttp = await serve(remote, { port: 0, hostname: "127.0.0.1" });
  // 80 bytes a URI of test://x: two a caller
  proxy = await createProxy(
    { url: remoteHttp.url },
    { limits: { subscriptionBytes: { perPrincipal: 160 } }, onError: () => {} },
  );
});
afterEach(async () => {
  await proxy.shutdown();
  await remoteHttp.close();
});

const subscribe = (id: number, uri: string, method = "resources/subscribe") => ({
  jsonrpc: "2.0",
  id,
  method,
  params: { uri },
});

describe("subscriptions through a proxy", () => {
  it("keep the remote subscribed while some session wants the URI, and no longer", async () => {
    const ann = rawPeer(proxy, { subject: "ann" });
    const bob = rawPeer(proxy, { subject: "bob" });
    for (const peer of [ann, bob]) await peer.initialize();
    expect(await ann.send(subscribe(1, "test://a"))).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    expect(await bob.send(subscribe(2, "test://a"))).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    expect(await bob.send(subscribe(3, "test://b"))).toEqual({ jsonrpc: "2.0", id: 3, result: {} });
    await expect.poll(subscribedNow).toEqual(["test://a", "test://b"]);
    // Ann leaves test://a: Bob still wants it
    expect(await ann.send(subscribe(4, "test://a", "resources/unsubscribe"))).toEqual({
      jsonrpc: "2.0",
      id: 4,
      result: {},
    });
    expect(await bob.send(subscribe(5, "test://b", "resources/unsubscribe"))).toEqual({
      jsonrpc: "2.0",
      id: 5,
      result: {},
    });
    await expect.poll(subscribedNow).toEqual(["test://a"]);
    // Bob's session ends: no one wants test://a any more
    bob.connection.close();
    await expect.poll(subscribedNow).toEqual([]);
    // and the URI comes back when someone wants it again
    expect(await ann.send(subscribe(6, "test://a"))).toEqual({ jsonrpc: "2.0", id: 6, result: {} });
    await expect.poll(subscribedNow).toEqual(["test://a"]);
  });

  it("counts each caller's subscriptions against its share, and gives them back", async () => {
    const ann = rawPeer(proxy, { subject: "ann" });
    const bob = rawPeer(proxy, { subject: "bob" });
    for (const peer of [ann, bob]) await peer.initialize();
    expect(await ann.send(subscribe(1, "test://a"))).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    expect(await ann.send(subscribe(2, "test://b"))).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    expect(await ann.send(subscribe(3, "test://c"))).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: {
        code: -32000,
        message: "Too Many Requests: this caller holds its share of bytes of subscriptions (160)",
        data: { limit: "subscriptionBytes", scope: "principal", max: 160, retryAfterMs: 5000 },
      },
    });
    // another caller has a share of its own
    expect(await bob.send(subscribe(4, "test://c"))).toEqual({ jsonrpc: "2.0", id: 4, result: {} });
    await expect.poll(subscribedNow).toEqual(["test://a", "test://b", "test://c"]);
    // an unsubscribe gives the share back
    await ann.send(subscribe(5, "test://b", "resources/unsubscribe"));
    expect(await ann.send(subscribe(6, "test://c"))).toEqual({ jsonrpc: "2.0", id: 6, result: {} });
  });
});
