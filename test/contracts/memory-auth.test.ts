// MemoryAuthStore, the authorization server's default store, runs the auth store contract; its clock
// is the process's `Date`, moved on by the test (timers stay real).
import { vi } from "vitest";
import { MemoryAuthStore } from "../../src/auth/memory-store.js";
import { authStoreContract } from "./auth-store-suite.js";

authStoreContract("MemoryAuthStore", async (options = {}) => {
  vi.useFakeTimers({ toFake: ["Date"] });
  return {
    store: new MemoryAuthStore({ sweepMs: 0, ...options }),
    now: () => Date.now(),
    advance: (ms) => void vi.setSystemTime(Date.now() + ms),
    close: () => void vi.useRealTimers(),
  };
});
