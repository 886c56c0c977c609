// The short seed set of the campaigns on what comes beside a message (scripts/fuzz/trace.js, params.js): trace
// context in `_meta` and Mcp-Param-* headers, over real sockets to an instrumented server (from dist/),
// both eras. `npm run fuzz -- --campaign trace,params --messages 100000` runs the long ones.
import { describe, expect, it } from "vitest";

type Campaign = (o: { messages: number; seed: number; cpu?: boolean }) => Promise<{
  answers: number;
  problems: string[];
  [key: string]: unknown;
}>;
const load = async (name: "traceCampaign" | "paramsCampaign"): Promise<Campaign> => {
  const file = name === "traceCampaign" ? "trace" : "params";
  return (await import(new URL(`../../scripts/fuzz/${file}.js`, import.meta.url).href))[name];
};

describe("fuzzing what comes beside a message", () => {
  it("trace context: every request runs in the client's trace exactly when its traceparent is valid", async () => {
    const result = await (await load("traceCampaign"))({ messages: 1500, seed: 5 });
    expect(result.problems).toEqual([]);
    expect(result.answers).toBe(1500);
    expect(result.parent).toBeGreaterThan(300);
    expect(result.malformed).toBeGreaterThan(600);
  }, 60_000);

  it("Mcp-Param-*: agreeing headers are served, every disagreement is 400 -32020", async () => {
    const result = await (await load("paramsCampaign"))({ messages: 1500, seed: 6, cpu: false });
    expect(result.problems).toEqual([]);
    expect(result.answers).toBeGreaterThan(1400);
    expect(result.agreed).toBeGreaterThan(500);
    expect(result.refused).toBeGreaterThan(500);
  }, 60_000);
});
