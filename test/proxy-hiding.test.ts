// picomcp/proxy's filters hold on every path to the remote: a URI that fits a hidden template (or no
// shown resource or template at all) is not found without asking the remote, even while other
// templates are shown; `completion/complete` refuses a hidden prompt or template and keeps the
// caller's `_meta` at the proxy. Raw JSON-RPC downstream, a picomcp server over HTTP upstream.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type NodeServer, serve } from "../src/http/node.js";
import { McpServer } from "../src/index.js";
import { createProxy, type ProxyServer } from "../src/proxy/index.js";
import { rawPeer } from "./helpers.js";

let remoteHttp: NodeServer;
let proxy: ProxyServer;
const seen: { method: string; params: any }[] = [];

beforeEach(async () => {
  seen.length = 0;
  const remote = new McpServer({ name: "pico-upstream", version: "3.0.0", onError: () => {} });
  const values = (v: string) => ["a", "b"].filter((x) => x.startsWith(v));
  remote.resource("secret://{id}", { read: ({ id }) => `secret ${id}`, complete: { id: values } });
  remote.resource("docs://{page}", { read: ({ page }) => `doc ${page}`, complete: { page: values } });
  remote.resource("test://plain", { read: () => "plain" });
  remote.resource("test://hidden", { read: () => "hidden" });
  remote.prompt("review", { args: [{ name: "text" }], get: () => "r", complete: { text: values } });
  remote.prompt("internal", { args: [{ name: "text" }], get: () => "i", complete: { text: values } });
  remote.use({
    id: "test/recorder",
    wrap: Object.fromEntries(
      ["resources/read", "completion/complete"].map((method) => [
        method,
        (p: any, _ctx: unknown, next: () => unknown) => {
          seen.push({ method, params: p });
          return next();
        },
      ]),
    ),
  });
  remoteHttp = await serve(remote, { port: 0, hostname: "127.0.0.1" });
  proxy = await createProxy(
    { url: remoteHttp.url },
    {
      resources: { hide: ["secret://{id}", "test://hidden"] },
      prompts: { hide: ["internal"] },
      onError: () => {},
    },
  );
});
afterEach(async () => {
  await proxy.shutdown();
  await remoteHttp.close();
});

const read = (id: number, uri: string) => ({ jsonrpc: "2.0", id, method: "resources/read", params: { uri } });
const notFound = (id: number, uri: string) => ({
  jsonrpc: "2.0",
  id,
  error: { code: -32002, message: `Resource not found: ${uri}`, data: { uri } },
});

describe("a proxy that hides a template while it shows another", () => {
  it("reads a URI of a shown template, and answers not found for one of a hidden template or of none", async () => {
    const peer = rawPeer(proxy);
    await peer.initialize();
    expect(await peer.send(read(1, "docs://intro"))).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { contents: [{ uri: "docs://intro", mimeType: "text/plain", text: "doc intro" }] },
    });
    expect(await peer.send(read(2, "secret://x"))).toEqual(notFound(2, "secret://x"));
    expect(await peer.send(read(3, "test://hidden"))).toEqual(notFound(3, "test://hidden"));
    expect(await peer.send(read(4, "other://z"))).toEqual(notFound(4, "other://z"));
    expect(await peer.send(read(5, "test://plain"))).toMatchObject({
      result: { contents: [{ text: "plain" }] },
    });
    expect(seen.map((s) => s.params.uri)).toEqual(["docs://intro", "test://plain"]);
    const subscribe = { jsonrpc: "2.0", id: 6, method: "resources/subscribe", params: { uri: "secret://x" } };
    const answer = await peer.send(subscribe);
    expect(answer.error?.code).not.toBeUndefined(); // no subscribe capability or not found: never upstream
  });

  it("completes only what it shows, without the caller's _meta", async () => {
    const peer = rawPeer(proxy);
    await peer.initialize();
    const complete = (id: number, ref: object, _meta?: object) => ({
      jsonrpc: "2.0",
      id,
      method: "completion/complete",
      params: { ref, argument: { name: "text", value: "" }, ...(_meta && { _meta }) },
    });
    const refused = (id: number, ref: object) => ({
      jsonrpc: "2.0",
      id,
      error: {
        code: -32602,
        message: "completion/complete names no prompt or resource shown here",
        data: { ref },
      },
    });
    const hiddenPrompt = { type: "ref/prompt", name: "internal" };
    const hiddenTemplate = { type: "ref/resource", uri: "secret://{id}" };
    expect(await peer.send(complete(1, hiddenPrompt))).toEqual(refused(1, hiddenPrompt));
    expect(await peer.send(complete(2, hiddenTemplate))).toEqual(refused(2, hiddenTemplate));
    expect(
      await peer.send(complete(3, { type: "ref/prompt", name: "review" }, { caller: "secret-trace" })),
    ).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { completion: { values: ["a", "b"] } },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.params.ref).toEqual({ type: "ref/prompt", name: "review" });
    expect(seen[0]!.params._meta?.caller).toBeUndefined();
  });
});
