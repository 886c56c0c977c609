import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/redis-setup.ts"],
    // two files at once even on two cores (vitest's default there is one): most of a file's time is
    // spent waiting on sockets, child processes and Redis, and the tests wait on conditions, not time
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // expect.poll waits on a condition; its default of 1 s is a wait on time on a loaded machine (the
    // dev console's page under two busy cores took longer): 15 s, still well within a test's timeout
    expect: { poll: { timeout: 15_000 } },
  },
});
