// The patterns campaign's short seed set: random schema patterns × texts on the linear-time matcher,
// against RegExp. `npm run fuzz -- --campaign patterns --messages 100000 --seed S` runs the long one.
import { describe, expect, it } from "vitest";

type Campaign = (o: { messages: number; seed: number }) => Promise<{
  patterns: number;
  refused: number;
  short: number;
  long: number;
  served: number;
  problems: string[];
}>;

describe("fuzzing schema patterns", () => {
  it("answers as RegExp does, refuses only by a documented bound, and stays within the step bound", async () => {
    const module = await import(new URL("../../scripts/fuzz/patterns.js", import.meta.url).href);
    const result = await (module.patternsCampaign as Campaign)({ messages: 3000, seed: 7 });
    expect(result.problems).toEqual([]);
    expect(result.short).toBeGreaterThan(1500);
    expect(result.long).toBeGreaterThan(20);
    expect(result.refused).toBeGreaterThan(10);
    expect(result.served).toBeGreaterThan(0);
  }, 60_000);
});
