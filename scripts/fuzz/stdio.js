// The stdio campaign: lines to a real child process, in random chunks, in either era.
import { finish, Ledger, startServer } from "./campaign.js";
import { junk, META, MODERN, mutate, notification, oracle, random, request } from "./generate.js";

const enc = new TextEncoder();

/** Runs `messages` fuzzed messages over stdio; `era` is "2025" (a session) or "2026" (no handshake). */
export async function stdioCampaign({ messages, seed, era, window = 32 }) {
  const r = random(seed);
  // what depends on the server's timing draws from its own sequence, so the messages stay seeded
  const answers = random(seed + 1);
  const modern = era === "2026";
  const started = Date.now();
  const server = await startServer("stdio");
  const { child } = server;
  const ledger = new Ledger();
  let next = 1;
  let rounds = 0;
  const followUps = [];

  const onAnswer = (a) => {
    if (Object.hasOwn(a, "method") && Object.hasOwn(a, "id")) {
      // a request to the client: every one gets an answer, good or not, or its tool waits forever
      const result = answers.pick([{ action: "accept", content: { n: "v" } }, { action: "decline" }, {}]);
      const reply = answers.chance(0.9)
        ? { jsonrpc: "2.0", id: a.id, result }
        : { jsonrpc: "2.0", id: a.id, error: { code: -1, message: "no" } };
      // straight out, not queued: the queue may have been flushed for the last time
      child.stdin.write(`${JSON.stringify(reply)}\n`);
      return;
    }
    const context = ledger.take(a);
    const result = a.result;
    if (context?.asks && result?.resultType === "input_required" && typeof result.requestState === "string") {
      if (answers.chance(0.7)) followUps.push({ params: context.params, state: result.requestState });
    }
    const text = result?.content?.[0]?.text;
    if (typeof text === "string" && text.startsWith("owner=")) {
      rounds++;
      const [owner, caller] = text.split(" ");
      if (owner.slice(6) !== caller.slice(7)) ledger.problem(`a request state crossed callers: ${text}`);
    }
  };

  let buffer = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    buffer += chunk;
    let nl = buffer.indexOf("\n");
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf("\n");
      let a;
      try {
        a = JSON.parse(line);
      } catch {
        ledger.problem(`output that is not JSON: ${line.slice(0, 120)}`);
        continue;
      }
      onAnswer(a);
    }
  });

  // pending bytes go out in random pieces: lines split anywhere, several lines at once
  let queued = [];
  const write = (message) => queued.push(enc.encode(`${JSON.stringify(message)}\n`));
  const flush = async () => {
    if (!queued.length) return;
    const all = Buffer.concat(queued);
    queued = [];
    for (let at = 0; at < all.length; ) {
      const size = r.chance(0.5) ? all.length - at : 1 + r.int(Math.min(all.length - at, 4096));
      if (!child.stdin.write(all.subarray(at, at + size)))
        await new Promise((resolve) => child.stdin.once("drain", resolve));
      at += size;
    }
  };

  const send = (message) => {
    // before a 2025 handshake a batch may be served, or refused whole once the era is known
    const context = {
      asks: message.params?.name === "asks",
      params: message.params,
      text: JSON.stringify(message),
    };
    ledger.expect(oracle(message, modern), context, modern && Array.isArray(message));
    write(message);
  };

  if (!modern) {
    send({
      jsonrpc: "2.0",
      id: next++,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: { elicitation: {}, sampling: {}, roots: {} },
        clientInfo: { name: "fuzz", version: "1" },
      },
    });
    write({ jsonrpc: "2.0", method: "notifications/initialized" });
    await flush();
    await ledger.below(1);
  }

  let baseline;
  const warmup = Math.min(1000, Math.floor(messages / 5));
  for (let i = 0; i < messages; i++) {
    if (i === warmup) {
      await flush();
      await ledger.below(1);
      baseline = await server.memory();
    }
    const kind = r.next();
    const id = r.chance(0.5) ? next++ : `s${next++}`;
    // drawn whether or not it is sent: the seed alone decides every other message
    const planned = request(r, id, modern);
    if (kind < 0.1 && followUps.length) {
      const { params, state } = followUps.shift();
      const requestState = answers.chance(0.1) ? state.slice(0, -2) + "xx" : state;
      send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { ...params, inputResponses: { n: { action: "accept", content: { n: "v" } } }, requestState },
      });
    } else if (kind < 0.7) send(planned);
    else if (kind < 0.8) send(notification(r, modern));
    else if (kind < 0.9) send(mutate(r, r.chance(0.8) ? request(r, id, modern) : notification(r, modern)));
    else if (kind < 0.97) {
      // bytes that are no JSON get one parse error without an id
      const bytes = junk(r, JSON.stringify(request(r, id, modern)));
      let value;
      try {
        value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
        ledger.expect(oracle(value, modern), { text: "junk" }, modern && Array.isArray(value));
      } catch {
        ledger.idlessCertain++;
      }
      queued.push(bytes, enc.encode("\n"));
    } else if (kind < 0.999) {
      send([request(r, next++, modern), notification(r, modern)].slice(0, 1 + r.int(2)));
    } else {
      const big = "é".repeat(256 * 1024 * (1 + r.int(4)));
      send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "echo", arguments: { t: big }, ...(modern ? { _meta: META } : {}) },
      });
    }
    if (r.chance(0.3) || i === messages - 1) await flush();
    if (!(await ledger.below(window))) ledger.problem(`answers stopped coming (${ledger.owed.size} owed)`);
    if (!server.isAlive()) break;
  }
  await flush();
  await ledger.below(1);
  // answers without an id come straight away; give the last ones a moment
  await new Promise((resolve) => setTimeout(resolve, 200));
  return finish(`stdio ${modern ? MODERN : "2025-11-25"}`, server, {
    messages,
    seed,
    started,
    ledger,
    baseline,
    extra: { inputRounds: rounds },
  });
}
