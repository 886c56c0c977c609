// Types of authorization.js, for the test that imports it.

export const AUTHORIZATION_SCENARIOS: string[];

export interface ScenarioRow {
  mark: string;
  name: string;
  passed: number;
  failed: number;
}

export function runAuthorizationScenarios(options?: {
  timeoutMs?: number;
  /** Runs at most (another only when the callback port was taken). Default: 3. */
  attempts?: number;
}): Promise<{ rows: ScenarioRow[]; out: string; code: number | null }>;
