// The wire fuzzer's short seed set: real child processes over stdio and HTTP, both eras.
// `npm run fuzz -- --messages 100000 --seed S` runs the long campaigns (scripts/fuzz.js).
import { describe, expect, it } from "vitest";

type Campaign = (o: { messages: number; seed: number; era: string }) => Promise<{
  answers: number;
  problems: string[];
  heapMiB: { baseline: number; final: number };
}>;
const load = async (transport: "stdio" | "http"): Promise<Campaign> => {
  const module = await import(new URL(`../../scripts/fuzz/${transport}.js`, import.meta.url).href);
  return transport === "stdio" ? module.stdioCampaign : module.httpCampaign;
};

describe("fuzzing the wire", () => {
  for (const era of ["2025", "2026"]) {
    it(`stdio, ${era === "2025" ? "a 2025-11-25 session" : "2026-07-28 requests"}: every request answered once, the process alive, the heap back`, async () => {
      const result = await (await load("stdio"))({ messages: 1200, seed: 7, era });
      expect(result.problems).toEqual([]);
      expect(result.answers).toBeGreaterThan(800);
    }, 60_000);

    it(`HTTP, ${era === "2025" ? "2025 sessions" : "2026-07-28 requests"}: one well-formed response each, nobody runs as another`, async () => {
      const result = await (await load("http"))({ messages: 400, seed: 11, era });
      expect(result.problems).toEqual([]);
      expect(result.answers).toBeGreaterThan(era === "2025" ? 200 : 80);
    }, 60_000);
  }
});
