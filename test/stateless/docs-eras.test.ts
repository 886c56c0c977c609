import { connect } from "picomcp/testing";
import { describe, expect, it, vi } from "vitest";
import { modernPeer } from "../modern-helpers.js";

// the example reads its key from the environment, as a deployment gives it
vi.hoisted(() => {
  process.env.MCP_STATE_KEY ??= Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
});
const { server: booking } = await import("../../examples/docs/eras-booking.js");

const ELICIT = { elicitation: {} };

describe("docs/eras.md example", () => {
  it("holds the table once across the rounds, and serves the initialize era with the same handler", async () => {
    const p = modernPeer(booking as unknown as Parameters<typeof modernPeer>[0]);
    const first = await p.request("tools/call", { name: "book_table" }, ELICIT);
    expect(Object.keys(first.answer.result.inputRequests)).toEqual(["guests"]);
    const retry = await p.request(
      "tools/call",
      {
        name: "book_table",
        inputResponses: { guests: { action: "accept", content: { guests: 4 } } },
        requestState: first.answer.result.requestState,
      },
      ELICIT,
    );
    expect(retry.answer.result.content).toEqual([{ type: "text", text: "Table for 4 booked (hold 1)" }]);
    const hours = await p.request("resources/read", { uri: "bookings://opening-hours" });
    expect([hours.answer.result.ttlMs, hours.answer.result.cacheScope]).toEqual([86_400_000, "public"]);
    expect((await p.request("tools/list")).answer.result.ttlMs).toBe(60_000);
    const client = await connect(booking, { onElicit: () => ({ action: "accept", content: { guests: 2 } }) });
    expect(await client.callTool("book_table")).toEqual({
      content: [{ type: "text", text: "Table for 2 booked (hold 2)" }],
    });
  });
});
