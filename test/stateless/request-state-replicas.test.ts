// Request-state keys across replicas: a rolling rotation (add the new key behind the old one
// everywhere, then put it first everywhere, then drop the old one) never refuses a round retried
// on another replica; putting the new key first on one replica before the others know it does.
import { describe, expect, it } from "vitest";
import { McpServer } from "../../src/index.js";
import { modernPeer } from "../modern-helpers.js";

const OLD = "o".repeat(32);
const NEW = "n".repeat(32);
const NAME = { type: "object" as const, properties: { name: { type: "string" } }, required: ["name"] };
const INVALID = {
  code: -32602,
  message: "Invalid or expired requestState",
  data: { reason: "invalid_request_state" },
};

/** One replica with `keys`: a tool that keeps a state across its rounds. */
function replica(keys: string[]) {
  const s = new McpServer({ name: "r", version: "1.0.0", onError: () => {}, requestState: { keys } });
  s.tool("greet", {
    run: async (_a, ctx) => {
      if (ctx.requestState === undefined) ctx.setRequestState({ n: 1 });
      const r = await ctx.elicit({ message: "Name?", requestedSchema: NAME }, { key: "who" });
      return `Hello, ${r.content?.name} (${JSON.stringify(ctx.requestState)})`;
    },
  });
  return modernPeer(s);
}

/** A round opened on `first`, retried on `then`: the retry's answer. */
async function retried(first: ReturnType<typeof replica>, then: ReturnType<typeof replica>) {
  const r = await first.request("tools/call", { name: "greet" }, { elicitation: {} });
  expect(r.answer.result.resultType).toBe("input_required");
  const params = {
    name: "greet",
    inputResponses: { who: { action: "accept", content: { name: "Ann" } } },
    requestState: r.answer.result.requestState,
  };
  return (await then.request("tools/call", params, { elicitation: {} })).answer;
}

const DONE = { content: [{ type: "text", text: 'Hello, Ann ({"n":1})' }] };

describe("request-state keys across replicas", () => {
  it("a rolling rotation in three steps never refuses a round retried on another replica", async () => {
    // each step is rolled out one replica at a time: mid-roll, replicas of the step before and of
    // this step serve side by side, and every round opened on either is retried on the other
    const steps = [[OLD], [OLD, NEW], [NEW, OLD], [NEW]];
    for (let i = 1; i < steps.length; i++) {
      const [before, after] = [replica(steps[i - 1]!), replica(steps[i]!)];
      for (const [a, b] of [
        [before, after],
        [after, before],
      ] as const) {
        const answer = await retried(a, b);
        expect([steps[i], answer.result]).toEqual([steps[i], expect.objectContaining(DONE)]);
      }
    }
  });

  it("refuses, on the replicas still on the old key, a round sealed with a new key put first too early", async () => {
    const [early, late] = [replica([NEW, OLD]), replica([OLD])];
    expect((await retried(early, late)).error).toEqual(INVALID);
    // the other way holds: the early replica still opens the old key
    expect((await retried(late, early)).result).toEqual(expect.objectContaining(DONE));
  });

  it("refuses a round of a retired key once the old key is dropped: retire it after ttlMs", async () => {
    expect((await retried(replica([OLD]), replica([NEW]))).error).toEqual(INVALID);
  });
});
