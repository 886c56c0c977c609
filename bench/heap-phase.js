// The heap phase of `npm run bench`: bytes of JavaScript heap each contender allocates per request, on
// stdio (echo, templated read) and stateless HTTP (echo). Every server runs with a fixed 64 MiB young
// generation and servers/heap-probe.js loaded before it; the bench reads the heap in use before and
// after a batch of requests and keeps the difference only when no garbage collection ran between (a
// batch that saw one is measured again). Allocation is what a request costs the GC later, on every
// transport, and it is steadier on a shared machine than time.
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { HttpPeer, httpLoad, openConnections, StdioPeer } from "./clients.js";

const PROBE = fileURLToPath(new URL("./servers/heap-probe.js", import.meta.url));

const probeOf = (name) => {
  const file = join(tmpdir(), `picomcp-heap-${process.pid}-${name}.json`);
  process.env.HEAP_PROBE_FILE = file;
  return { file, node: ["--max-semi-space-size=64", "--min-semi-space-size=64", "--import", PROBE] };
};

/** The probe's reading, once the child has answered the signal. */
async function reading(pid, file, last) {
  process.kill(pid, "SIGUSR2");
  // a loaded machine may take a while to run the child's handler
  for (let i = 0; i < 2000; i++) {
    await new Promise((r) => setTimeout(r, 5));
    try {
      const r = JSON.parse(readFileSync(file, "utf8"));
      if (r.seq > last) return r;
    } catch {}
  }
  throw new Error("the heap probe did not answer");
}

/** Bytes per request of `run()` (which makes `count` requests): the median of 3 batches without a GC. */
async function perRequest(pid, file, run) {
  const got = [];
  let last = 0;
  for (let attempt = 0; attempt < 8 && got.length < 3; attempt++) {
    const a = await reading(pid, file, last);
    const count = await run();
    const b = await reading(pid, file, a.seq);
    last = b.seq;
    if (b.gcs === a.gcs) got.push((b.heapUsed - a.heapUsed) / count);
  }
  got.sort((x, y) => x - y);
  return got.length ? got[got.length >> 1] : Number.NaN;
}

/**
 * One contender: stdio echo and read (when it has stdio: `withStdio`), then HTTP stateless echo;
 * `add(metric, name, bytes)`.
 */
export async function heapPhase(name, { echo, read }, add, fail, quick = false, withStdio = true) {
  // --quick checks that the phase works, on smaller batches
  const BATCH = quick ? 500 : 4000;
  const { file, node } = probeOf(name);
  try {
    if (withStdio) {
      const peer = await StdioPeer.start(name, [], node);
      try {
        // warm: the JIT settles before anything is counted
        await peer.load(echo, { count: 3 * BATCH, ms: 60_000 });
        await peer.load(read, { count: 3 * BATCH, ms: 60_000 });
        // every request sent is answered before load resolves (the last window is read and dropped)
        const batch = (make) => async () => (await peer.load(make, { count: BATCH, ms: 60_000 })).sent;
        add("heapEcho", name, await perRequest(peer.pid, file, batch(echo)));
        add("heapRead", name, await perRequest(peer.pid, file, batch(read)));
      } finally {
        await peer.stop();
      }
    }
    // the stdio child's readings are gone before the HTTP child numbers its own from 1
    rmSync(file, { force: true });
    const http = await HttpPeer.start(name, [], node);
    try {
      const conns = await openConnections(http.port, 8, { sessions: false });
      const check = (m) => m?.result?.content?.[0]?.type === "text";
      await httpLoad(conns, echo, 300, check);
      const bytes = await perRequest(http.pid, file, async () => {
        const r = await httpLoad(conns, echo, 150, check);
        if (r.bad) fail(name, `heap phase: ${r.bad} bad HTTP answers`);
        return r.count;
      });
      add("heapHttp", name, bytes);
      for (const c of conns) c.close();
    } finally {
      await http.stop();
    }
  } finally {
    rmSync(file, { force: true });
  }
}
