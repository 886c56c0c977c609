// One picomcp server, three official clients at the same time: the SDK v1 client in a 2025-11-25
// session, and the SDK v2 client pinned to 2026-07-28 and in `auto` mode, each over an in-process bridge.
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";
import { BridgeTransport } from "../sdk-bridge.js";

function server() {
  const s = new McpServer({ name: "both", version: "1.0.0" });
  s.tool("greet", {
    description: "Asks for a name",
    run: async (_a, ctx) => {
      const r = await ctx.elicit(
        { message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } },
        { key: "name" },
      );
      return `Hello, ${r.content?.name} (${ctx.client.protocolVersion})`;
    },
  });
  s.resource("test://doc", { description: "A document", read: () => "doc" });
  return s;
}

const until = async (done: () => boolean) => {
  for (let i = 0; !done() && i < 200; i++) await new Promise((r) => setTimeout(r, 5));
};

describe("both eras on one server, with the official clients", () => {
  it("serves a 2025-11-25 session and 2026-07-28 clients at once; one change reaches them all", async () => {
    const s = server();
    const v1 = new ClientV1({ name: "v1", version: "1" }, { capabilities: { elicitation: {} } });
    v1.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Una" } }));
    await v1.connect(new BridgeTransport(s, "2025-11-25"));
    const v2 = async (mode: "auto" | { pin: string }, name: string) => {
      const c = new ClientV2(
        { name: "v2", version: "2" },
        { capabilities: { elicitation: {} }, versionNegotiation: { mode } },
      );
      c.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { name } }));
      await c.connect(new BridgeTransport(s) as never);
      return c;
    };
    const [pinned, auto] = await Promise.all([v2({ pin: "2026-07-28" }, "Pia"), v2("auto", "Aut")]);
    expect([pinned.getNegotiatedProtocolVersion(), auto.getNegotiatedProtocolVersion()]).toEqual([
      "2026-07-28",
      "2026-07-28",
    ]);

    const texts = await Promise.all(
      [v1, pinned, auto].map(async (c) => {
        const r = (await (c as ClientV1).callTool({ name: "greet", arguments: {} })) as {
          content: { text: string }[];
        };
        return r.content[0]!.text;
      }),
    );
    expect(texts).toEqual(["Hello, Una (2025-11-25)", "Hello, Pia (2026-07-28)", "Hello, Aut (2026-07-28)"]);

    const heard: string[] = [];
    v1.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n) => void heard.push(`v1 ${n.params.uri}`),
    );
    await v1.subscribeResource({ uri: "test://doc" });
    pinned.setNotificationHandler(
      "notifications/resources/updated",
      (n) => void heard.push(`v2 ${n.params.uri}`),
    );
    const sub = await pinned.listen({ resourceSubscriptions: ["test://doc"] });
    s.resourceUpdated("test://doc");
    await until(() => heard.length >= 2);
    expect(heard.sort()).toEqual(["v1 test://doc", "v2 test://doc"]);
    await sub.close();
    await Promise.all([v1.close(), pinned.close(), auto.close()]);
  });
});
