// The change bus contract: what the server relies on from any `ChangeBus` (src/bus.ts) to carry list
// changes, resource updates and task changes to the connections that hear them, in this instance and,
// for a shared bus, in the others. Each bus runs it in a few lines (test/contracts/memory.test.ts,
// test/contracts/redis.test.ts).
import { afterEach, describe, expect, it } from "vitest";
import type { ChangeBus, ChangeEvent } from "../../src/bus.js";
import { until } from "./support.js";

/** The buses of one fresh deployment, one per instance, each ready to carry events. */
export interface BusDeployment {
  /** One bus for an in-process bus; two or more (instances of one deployment) for a shared one. */
  readonly instances: readonly ChangeBus[];
  close?(): void | Promise<void>;
}

/** What the bus offers beyond the interface, so that the suite checks it too. */
export interface ChangeBusFeatures {
  /** Instances share events; two deployments `make` builds share nothing. */
  readonly shared?: boolean;
  /** Which events reach other instances (a shared bus). Default: all but task changes. */
  readonly crosses?: (event: ChangeEvent) => boolean;
  /** It documents what it does while its backend is down: a deployment cut off on demand. */
  readonly outage?: () => Promise<BusOutage>;
}

/** A deployment whose backend can be taken away, and its log lines, per instance. */
export interface BusOutage extends BusDeployment {
  readonly lines: readonly (readonly string[])[];
  /** What the one line of an outage says, and the one of the recovery. */
  readonly says: { readonly down: RegExp; readonly back: string };
  /** Takes the backend away; resolves once the buses' connections know. */
  down(): Promise<void>;
  /** Brings it back; resolves once the buses' connections are ready again. */
  up(): Promise<void>;
}

/** Every kind of event, with the details that must arrive as published. */
const EVENTS: readonly ChangeEvent[] = [
  { type: "list_changed", kind: "tools" },
  { type: "resource_updated", uri: "note://a b/ünï?x=1&y=✓#frag" },
  { type: "list_changed", kind: "resources" },
  {
    type: "task",
    task: { taskId: "t-1", status: "completed", result: { content: [{ type: "text", text: "done" }] } },
    owner: "user:ada",
  },
  { type: "list_changed", kind: "prompts" },
  { type: "task", task: { taskId: "t-2", status: "working" } },
  { type: "resource_updated", uri: "" },
];

const updated = (uri: string): ChangeEvent => ({ type: "resource_updated", uri });

/** A listener that records what it hears. */
function recorder() {
  const heard: ChangeEvent[] = [];
  const listener = (event: ChangeEvent) => void heard.push(event);
  /** Resolves once it has heard `event` (a resource update, the marker that ends a test's events). */
  const hears = (event: ChangeEvent) =>
    until(() => heard.some((e) => JSON.stringify(e) === JSON.stringify(event)), JSON.stringify(event));
  return { heard, listener, hears };
}

/** Runs the change bus contract against the deployments `make` builds (a fresh one per test). */
export function changeBusContract(
  name: string,
  make: () => Promise<BusDeployment>,
  features: ChangeBusFeatures = {},
): void {
  const { shared = false, crosses = (e: ChangeEvent) => e.type !== "task", outage } = features;
  describe(`change bus contract: ${name}`, () => {
    const open: BusDeployment[] = [];
    afterEach(async () => {
      for (const d of open.splice(0)) await d.close?.();
    });
    async function deploy(): Promise<BusDeployment> {
      const d = await make();
      open.push(d);
      expect(d.instances.length).toBe(shared ? Math.max(2, d.instances.length) : 1);
      return d;
    }
    /** Who publishes in a test: the listeners' own instance, and another one when the bus is shared. */
    const sources = shared
      ? (["its own instance", "another instance"] as const)
      : (["its own instance"] as const);
    const pick = (d: BusDeployment, from: (typeof sources)[number]) =>
      from === "its own instance" ? d.instances[0]! : d.instances[1]!;
    /** What a listener hears of `events` published where `from` says. */
    const heardOf = (events: readonly ChangeEvent[], from: (typeof sources)[number]) =>
      from === "its own instance" ? events : events.filter(crosses);

    for (const from of sources) {
      it(`from ${from}: every subscriber hears each event once, as published, in order`, async () => {
        const d = await deploy();
        const [a, b] = [recorder(), recorder()];
        d.instances[0]!.subscribe(a.listener);
        d.instances[0]!.subscribe(b.listener);
        const far = recorder();
        if (shared) d.instances[1]!.subscribe(far.listener);
        const publisher = pick(d, from);
        for (const e of EVENTS) publisher.publish(structuredClone(e));
        publisher.publish(updated("note://end"));
        await Promise.all([a.hears(updated("note://end")), b.hears(updated("note://end"))]);
        const expected = [...heardOf(EVENTS, from), updated("note://end")];
        if (shared) {
          // a round trip through the other instance: an echo of ours, or a second copy of theirs,
          // would be on its way before this, and arrive first
          await far.hears(updated("note://end"));
          d.instances[1]!.publish(updated("note://barrier"));
          await Promise.all([a.hears(updated("note://barrier")), b.hears(updated("note://barrier"))]);
          expected.push(updated("note://barrier"));
        }
        expect(a.heard).toStrictEqual(expected);
        expect(b.heard).toStrictEqual(expected);
      });

      it(`from ${from}: a listener that throws keeps the event from no one, and publish does not throw`, async () => {
        const d = await deploy();
        let calls = 0;
        d.instances[0]!.subscribe(() => {
          calls++;
          throw new Error("a broken listener");
        });
        const ok = recorder();
        d.instances[0]!.subscribe(ok.listener);
        const publisher = pick(d, from);
        expect(() => publisher.publish(updated("note://1"))).not.toThrow();
        expect(() => publisher.publish(updated("note://end"))).not.toThrow();
        await ok.hears(updated("note://end"));
        expect(ok.heard).toStrictEqual([updated("note://1"), updated("note://end")]);
        expect(calls).toBe(2);
      });

      it(`from ${from}: once unsubscribed a listener hears nothing more; the others still do`, async () => {
        const d = await deploy();
        const [gone, stays] = [recorder(), recorder()];
        const unsubscribe = d.instances[0]!.subscribe(gone.listener);
        d.instances[0]!.subscribe(stays.listener);
        const publisher = pick(d, from);
        publisher.publish(updated("note://1"));
        await gone.hears(updated("note://1"));
        unsubscribe();
        unsubscribe(); // a second call is harmless
        publisher.publish(updated("note://2"));
        publisher.publish(updated("note://end"));
        await stays.hears(updated("note://end"));
        expect(gone.heard).toStrictEqual([updated("note://1")]);
        expect(stays.heard).toStrictEqual([updated("note://1"), updated("note://2"), updated("note://end")]);
        // subscribing again is a new subscription
        d.instances[0]!.subscribe(gone.listener);
        publisher.publish(updated("note://again"));
        await gone.hears(updated("note://again"));
        expect(gone.heard).toStrictEqual([updated("note://1"), updated("note://again")]);
      });

      it(`from ${from}: who subscribes or unsubscribes while an event is delivered does so from the next one`, async () => {
        const d = await deploy();
        const bus = d.instances[0]!;
        const [late, removed] = [recorder(), recorder()];
        const first = recorder();
        let unsubscribeRemoved = () => {};
        bus.subscribe((event) => {
          first.listener(event);
          if (first.heard.length !== 1) return;
          bus.subscribe(late.listener);
          unsubscribeRemoved();
        });
        unsubscribeRemoved = bus.subscribe(removed.listener);
        const publisher = pick(d, from);
        publisher.publish(updated("note://1"));
        publisher.publish(updated("note://end"));
        await first.hears(updated("note://end"));
        await late.hears(updated("note://end"));
        // once unsubscribe returns, the listener is never called again, even for the event under way
        expect(removed.heard).toStrictEqual([]);
        expect(late.heard).toStrictEqual([updated("note://end")]);
      });
    }

    it.runIf(shared)(
      "instances hear each other's events once each, in the order each published them",
      async () => {
        const d = await deploy();
        const [a, b] = [recorder(), recorder()];
        d.instances[0]!.subscribe(a.listener);
        d.instances[1]!.subscribe(b.listener);
        const mine = (who: string) => Array.from({ length: 20 }, (_, i) => updated(`note://${who}/${i}`));
        const [fromA, fromB] = [mine("A"), mine("B")];
        for (let i = 0; i < 20; i++) {
          d.instances[0]!.publish(fromA[i]!);
          d.instances[1]!.publish(fromB[i]!);
        }
        await Promise.all([a, b].flatMap((r) => [r.hears(fromA[19]!), r.hears(fromB[19]!)]));
        const by = (heard: ChangeEvent[], who: string) =>
          heard.filter((e) => e.type === "resource_updated" && e.uri.startsWith(`note://${who}/`));
        for (const r of [a, b]) {
          expect(r.heard).toHaveLength(40);
          expect(by(r.heard, "A")).toStrictEqual(fromA);
          expect(by(r.heard, "B")).toStrictEqual(fromB);
        }
      },
    );

    it.runIf(shared)("another deployment on the same backend hears nothing of this one's", async () => {
      const [d, other] = [await deploy(), await deploy()];
      const [mine, theirs, theirsToo] = [recorder(), recorder(), recorder()];
      d.instances[1]!.subscribe(mine.listener);
      other.instances[0]!.subscribe(theirs.listener);
      other.instances[1]!.subscribe(theirsToo.listener);
      for (const e of EVENTS) d.instances[0]!.publish(e);
      d.instances[0]!.publish(updated("note://end"));
      await mine.hears(updated("note://end"));
      // published after this deployment's events went out: heard after them, had they crossed
      other.instances[0]!.publish(updated("note://theirs"));
      await theirsToo.hears(updated("note://theirs"));
      expect(theirsToo.heard).toStrictEqual([updated("note://theirs")]);
      expect(theirs.heard).toStrictEqual([updated("note://theirs")]);
    });

    it.runIf(outage !== undefined)(
      "while its backend is down: each instance's own subscribers still hear it, nothing comes late, one line each way",
      async () => {
        const o = await outage!();
        open.push(o);
        const [a, b] = [recorder(), recorder()];
        o.instances[0]!.subscribe(a.listener);
        o.instances[1]!.subscribe(b.listener);
        o.instances[0]!.publish(updated("note://before"));
        await b.hears(updated("note://before"));
        await o.down();
        expect(() => o.instances[0]!.publish(updated("note://a-while-down"))).not.toThrow();
        expect(() => o.instances[1]!.publish(updated("note://b-while-down"))).not.toThrow();
        await a.hears(updated("note://a-while-down"));
        await b.hears(updated("note://b-while-down"));
        // a client that still says it is connected (a cluster's, Sentinel's) fails the publish at its deadline
        await until(() => o.lines.every((l) => l.length > 0), "the lines of the outage");
        for (const lines of o.lines) {
          expect(lines).toHaveLength(1);
          expect(lines[0]).toMatch(o.says.down);
        }
        await o.up();
        await until(() => o.lines.every((l) => l.length === 2), "the lines of the recovery");
        for (const lines of o.lines) expect(lines[1]).toBe(o.says.back);
        o.instances[0]!.publish(updated("note://after"));
        await b.hears(updated("note://after"));
        // what was published while Redis was away is not delivered late
        expect(a.heard).toStrictEqual([
          updated("note://before"),
          updated("note://a-while-down"),
          updated("note://after"),
        ]);
        expect(b.heard).toStrictEqual([
          updated("note://before"),
          updated("note://b-while-down"),
          updated("note://after"),
        ]);
        expect(o.lines.map((l) => l.length)).toEqual(o.lines.map(() => 2));
      },
    );
  });
}
