/**
 * Request slots and session slots are two kinds: each verb takes only its own, refused by the types
 * and, from untyped code, by a TypeError naming the slot; in both eras.
 */
import { describe, expect, it } from "vitest";
import {
  type Context,
  McpServer,
  type RequestSlot,
  requestSlot,
  type SessionSlot,
  sessionSlot,
} from "../../src/index.js";
import { rawPeer } from "../helpers.js";
import { modernPeer } from "../modern-helpers.js";

const perSession = sessionSlot("com.example/seen", () => new Set<string>());
const perRequest = requestSlot("com.example/steps", () => [] as string[]);

/** What untyped code (plain JavaScript) may pass: either kind to either verb. */
const misuses: { [name: string]: (ctx: Context) => unknown } = {
  // @ts-expect-error: ctx.get takes a request slot, not a session slot
  get: (ctx) => ctx.get(perSession),
  // @ts-expect-error: ctx.set takes a request slot, not a session slot
  set: (ctx) => ctx.set(perSession, new Set<string>()),
  // @ts-expect-error: ctx.sessionState takes a session slot, not a request slot
  sessionState: (ctx) => ctx.sessionState(perRequest),
};

const MESSAGES = {
  get: "Slot com.example/seen is not a request slot: ctx.get and ctx.set take a requestSlot",
  set: "Slot com.example/seen is not a request slot: ctx.get and ctx.set take a requestSlot",
  sessionState: "Slot com.example/steps is not a session slot: ctx.sessionState takes a sessionSlot",
};

function server() {
  const errors: string[] = [];
  const s = new McpServer({ name: "t", version: "1.0.0", onError: (e) => void errors.push(String(e)) });
  s.use({
    id: "com.example/slots",
    methods: {
      "slots/misuse": { run: (params, ctx) => misuses[params.verb as string]!(ctx) ?? {} },
      "slots/use": {
        run: (_params, ctx) => {
          ctx.get(perRequest).push("a");
          ctx.sessionState(perSession).add("x");
          return { steps: ctx.get(perRequest), seen: ctx.sessionState(perSession).size };
        },
      },
    },
  });
  return { s, errors };
}

describe("slot kinds", () => {
  it("the factories make distinct kinds: neither fits the other's type", () => {
    // @ts-expect-error: a session slot is not a request slot
    const asRequest: RequestSlot<Set<string>> = perSession;
    // @ts-expect-error: a request slot is not a session slot
    const asSession: SessionSlot<string[]> = perRequest;
    expect([asRequest.kind, asSession.kind]).toEqual(["session", "request"]);
  });

  it.each(["2025-11-25", "2026-07-28"])(
    "%s: a slot of the wrong kind is a TypeError naming it; the right ones work",
    async (era) => {
      const { s, errors } = server();
      const legacy = rawPeer(s);
      await legacy.initialize();
      const modern = modernPeer(s);
      const call = async (method: string, params: object) =>
        era === "2025-11-25"
          ? await legacy.send({ jsonrpc: "2.0", id: 1, method, params })
          : (await modern.request(method, params)).answer;
      for (const [verb, message] of Object.entries(MESSAGES)) {
        const answer = await call("slots/misuse", { verb });
        expect(answer.error).toEqual({ code: -32603, message: "Internal error" });
        expect(errors.shift()).toBe(`TypeError: ${message}`);
      }
      const fine = await call("slots/use", {});
      expect(fine.result).toMatchObject({ steps: ["a"], seen: 1 });
      expect(errors).toEqual([]);
    },
  );
});
