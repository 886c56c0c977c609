// The official conformance suite's authorization-server scenarios (0.2.0-alpha.12 `conformance
// authorization`) against picomcp's authorization server (examples/conformance-auth.ts, built), the
// grant scenario's browser step taken through the consent page by the same code as `npm run conformance`.
import { describe, expect, it } from "vitest";
import {
  AUTHORIZATION_SCENARIOS,
  runAuthorizationScenarios,
} from "../../scripts/conformance/authorization.js";

/** Each run's limit and how many runs (a run again only when the callback port was taken): the test's limit holds them all. */
const RUN_MS = 90_000;
const ATTEMPTS = 2;

describe("the conformance suite's authorization-server scenarios", () => {
  it("pass: the metadata endpoint, and the authorization code grant through the consent page", {
    timeout: RUN_MS * ATTEMPTS + 30_000,
  }, async () => {
    const { rows, out, code } = await runAuthorizationScenarios({ timeoutMs: RUN_MS, attempts: ATTEMPTS });
    const summary = Object.fromEntries(rows.map((r) => [r.name, r]));
    expect(Object.keys(summary).sort(), out).toEqual([...AUTHORIZATION_SCENARIOS].sort());
    for (const name of AUTHORIZATION_SCENARIOS)
      expect(summary[name], out).toMatchObject({ mark: "✓", failed: 0 });
    // both checks of the metadata scenario (the document, and CIMD advertised) and the grant's one
    expect(summary["authorization-server-metadata-endpoint"]!.passed, out).toBe(2);
    expect(summary["authorization-code-grant"]!.passed, out).toBe(1);
    expect(code, out).toBe(0);
  });
});
