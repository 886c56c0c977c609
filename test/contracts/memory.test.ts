// The in-process implementations of the pluggable interfaces run their contracts.
import { LocalBus } from "../../src/bus.js";
import { MemoryTaskStore } from "../../src/ext/task-store.js";
import { MemoryEventStore } from "../../src/http/event-store.js";
import { MemorySessionStore } from "../../src/http/session-store.js";
import { MemoryRateStore } from "../../src/limits/rate.js";
import { changeBusContract } from "./change-bus.js";
import { eventStoreContract } from "./event-store.js";
import { rateStoreContract } from "./rate-store.js";
import { sessionBackendContract } from "./session-backend.js";
import { sessionStoreContract } from "./session-store.js";
import { taskStoreContract } from "./task-store.js";

taskStoreContract(
  "MemoryTaskStore",
  async ({ maxTasks }) => {
    let now = Date.parse("2026-01-01T00:00:00.000Z");
    const store = new MemoryTaskStore({ now: () => now, maxTasks });
    return {
      store,
      advance: (ms) => {
        now += ms;
      },
    };
  },
  { maxTasks: true },
);

// its per-stream character cap is the largest event; the session and total caps are tight, so that
// the suite's flood reaches them (test/http/http-limits.test.ts checks them one by one)
eventStoreContract("MemoryEventStore", async ({ maxEventsPerStream, maxEventChars }) => ({
  store: new MemoryEventStore({
    maxEventsPerStream,
    maxCharsPerStream: maxEventChars,
    maxCharsPerSession: 3 * maxEventChars,
    maxChars: 10 * maxEventChars,
  }),
}));

changeBusContract("LocalBus", async () => ({ instances: [new LocalBus()] }));

rateStoreContract("MemoryRateStore", async () => {
  let now = 0;
  return {
    store: new MemoryRateStore({ now: () => now }),
    advance: (ms) => {
      now += ms;
    },
  };
});

// one store serves every handler of a process: each instance's view is the store itself
sessionStoreContract("MemorySessionStore", async () => {
  const store = new MemorySessionStore();
  return { store, peer: store };
});

// the handler's three kinds of sessions; the shared one on a store every handler of the process shares
sessionBackendContract("none (sessions: false)", async () => ({ sessions: false }), { sessions: false });
sessionBackendContract("local (sessions: true)", async () => ({ sessions: true }), { sessions: true });
sessionBackendContract(
  "shared (sessions: MemorySessionStore)",
  async () => {
    const store = new MemorySessionStore();
    return { sessions: store, peer: store };
  },
  { sessions: true, shared: true },
);
