// What both transports' campaigns share: the server child, its memory, and the answer ledger.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { malformed } from "./generate.js";

const FIXTURE = fileURLToPath(new URL("../../test/fixtures/fuzz-server.js", import.meta.url));

/** Starts the fuzzed server in a child process (`stdio` or `http`); resolves with its first IPC message. */
export async function startServer(mode) {
  const child = fork(FIXTURE, [mode], {
    stdio: ["pipe", "pipe", "ignore", "ipc"],
    execArgv: ["--expose-gc", "--max-old-space-size=512"],
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const hello = await new Promise((resolve, reject) => {
    child.once("message", resolve);
    child.once("exit", () => reject(new Error("the fuzz server exited before it was ready")));
  });
  let alive = true;
  exited.then(() => {
    alive = false;
  });
  /** Heap and RSS after a full GC in the child, and its peak RSS so far. */
  const memory = () =>
    new Promise((resolve) => {
      child.once("message", resolve);
      child.send("memory");
    });
  const stop = async () => {
    if (alive) child.disconnect();
    await exited;
  };
  return { child, hello, memory, stop, isAlive: () => alive };
}

/**
 * Which answers are owed: each id once, answers without an id between the certain and the possible
 * count. Every problem is recorded, not thrown, so a campaign reports all it found.
 */
export class Ledger {
  owed = new Map();
  idless = 0;
  idlessCertain = 0;
  idlessMaybe = 0;
  answers = 0;
  notifications = 0;
  problems = [];
  #waiters = [];

  /** Ids that may get an answer, or may be covered by one error without an id (a batch where the era may refuse batches). */
  optional = new Map();

  expect(o, context, optional = false) {
    if (optional) {
      for (const id of o.ids) this.optional.set(id, context);
      this.idlessMaybe += o.idless + o.maybe + 1;
      return;
    }
    for (const id of o.ids) {
      if (this.owed.has(id)) this.problem(`id ${JSON.stringify(id)} reused by the fuzzer`);
      this.owed.set(id, context);
    }
    this.idlessCertain += o.idless;
    this.idlessMaybe += o.maybe;
  }

  problem(text) {
    if (this.problems.length < 50) this.problems.push(text);
  }

  /** Records one message from the server; returns the owed context of an answer, if any. */
  take(a) {
    const why = malformed(a);
    if (why) {
      this.problem(`${why}: ${JSON.stringify(a).slice(0, 200)}`);
      return undefined;
    }
    if (Object.hasOwn(a, "method")) {
      if (!Object.hasOwn(a, "id")) this.notifications++;
      return undefined;
    }
    this.answers++;
    if (!Object.hasOwn(a, "id") || a.id === null) {
      this.idless++;
      return undefined;
    }
    if (this.optional.delete(a.id)) return undefined;
    const context = this.owed.get(a.id);
    if (context === undefined) this.problem(`an answer nobody is owed: ${JSON.stringify(a).slice(0, 200)}`);
    this.owed.delete(a.id);
    this.#wake();
    return context;
  }

  #wake() {
    for (const w of this.#waiters.splice(0)) w();
  }

  /** Resolves once fewer than `n` answers are owed. */
  async below(n, timeoutMs = 30_000) {
    const until = Date.now() + timeoutMs;
    while (this.owed.size >= n) {
      if (Date.now() > until) return false;
      await new Promise((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return true;
  }

  /** The final checks: nothing owed, the id-less answers within bounds. */
  settle() {
    for (const [id, context] of [...this.owed].slice(0, 5))
      this.problem(`no answer to id ${JSON.stringify(id)}: ${String(context.text).slice(0, 300)}`);
    if (this.idless < this.idlessCertain || this.idless > this.idlessCertain + this.idlessMaybe)
      this.problem(
        `${this.idless} answers without an id, expected ${this.idlessCertain} to ${this.idlessCertain + this.idlessMaybe}`,
      );
  }
}

/**
 * Ends a campaign: settles the ledger, reads the server's memory while it is alive, stops it, and
 * reports (the baseline is the final reading when the campaign ended before it took one).
 */
export async function finish(name, server, { messages, seed, started, ledger, baseline, extra }) {
  ledger.settle();
  const alive = server.isAlive();
  const final = alive ? await server.memory() : (baseline ?? {});
  await server.stop();
  return report(name, { messages, seed, started, ledger, baseline: baseline ?? final, final, alive, extra });
}

/** The numbers a campaign reports. */
function report(name, { messages, seed, started, ledger, baseline, final, alive, extra = {} }) {
  const mib = (n) => Math.round((n / 1048576) * 10) / 10;
  const problems = [...ledger.problems];
  if (!alive) problems.push("the server process died");
  const grown = final.heapUsed - baseline.heapUsed;
  // V8 keeps some slack after GC: a campaign that leaks grows with its length, far past this
  if (grown > 16 * 1048576) problems.push(`heap grew by ${mib(grown)} MiB after GC`);
  return {
    name,
    seed,
    messages,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    answers: ledger.answers,
    notifications: ledger.notifications,
    heapMiB: { baseline: mib(baseline.heapUsed), final: mib(final.heapUsed) },
    maxRssMiB: mib(final.maxRss),
    ...extra,
    problems,
  };
}
