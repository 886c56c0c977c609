import { afterEach, describe, expect, it, vi } from "vitest";
import { McpServer } from "../../src/index.js";
import { rawPeer } from "../helpers.js";

afterEach(() => vi.restoreAllMocks());

describe("a graceful end of a session with no listen open", () => {
  it("makes the session no id it never needed (picomcp/listen looks nothing up)", async () => {
    const server = new McpServer({ name: "t", version: "1" });
    server.tool("echo", { run: () => "hi" });
    const peer = rawPeer(server);
    await peer.initialize();
    const call = await peer.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo" } });
    expect(call.result.content).toEqual([{ type: "text", text: "hi" }]);
    const uuid = vi.spyOn(globalThis.crypto, "randomUUID");
    const ended = new Promise<void>((resolve) =>
      server.use({ id: "test/ended", sessionEnd: () => resolve() }),
    );
    // a graceful end (server.close(), or a stdio server's end of input) runs every sessionEnd hook
    await server.close();
    await ended;
    expect(uuid).not.toHaveBeenCalled();
  });
});
