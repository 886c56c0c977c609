// What the contract suites share: waiting on a condition (never on time), and a target's parts.

/** Resolves once `check` holds (polled every 5 ms); rejects after `ms`, saying what it waited for. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what = "a condition",
  ms = 10_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** What a suite's target must give for the features it was run with. */
export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the target gives no ${what}`);
  return value;
}
