// Loaded before a contender's server by the heap phase (`node --import`): on SIGUSR2 it writes the
// heap in use and the count of garbage collections so far to $HEAP_PROBE_FILE, so that the bench can
// take the bytes a batch of requests allocated as the difference (valid only when no GC ran between).
import { writeFileSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";

let gcs = 0;
let seq = 0;
new PerformanceObserver((list) => {
  gcs += list.getEntries().length;
}).observe({ entryTypes: ["gc"] });
process.on("SIGUSR2", () => {
  const heapUsed = process.memoryUsage().heapUsed;
  writeFileSync(process.env.HEAP_PROBE_FILE, JSON.stringify({ seq: ++seq, heapUsed, gcs }));
});
