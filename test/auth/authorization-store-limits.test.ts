// The authorization server when its store is at a cap: a cached client metadata document that finds no
// room is used uncached, registered clients expire unused, and counters and codes not yet redeemed are
// never dropped while live.
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryAuthStore } from "../../src/auth/index.js";
import { boundFetch } from "../crowd-helpers.js";
import {
  authorizeUrl,
  getCode,
  openConsent,
  pkce,
  REDIRECT,
  redeem,
  registerClient,
  standard,
  submitConsent,
  useAuthServers,
} from "./as-helpers.js";

const serve = useAuthServers();

const DOC = "https://app.example/client.json";

/** Options serving the metadata document of `DOC` through an injected lookup and fetch; `fetched` counts the fetches. */
function documents(fetched: { n: number }) {
  return {
    lookup: async () => [{ address: "93.184.215.14" }],
    fetch: async () => {
      fetched.n++;
      return new Response(
        JSON.stringify({ client_id: DOC, client_name: "Doc app", redirect_uris: [REDIRECT] }),
        { headers: { "content-type": "application/json", "cache-control": "max-age=300" } },
      );
    },
  };
}

describe("a store full of registered clients", () => {
  it("still serves clients by metadata document: fetched each time, not cached, never a 503", async () => {
    const store = new MemoryAuthStore({ maxClients: 1 });
    const fetched = { n: 0 };
    const s = await serve({ store, clientMetadataDocuments: documents(fetched) });
    await registerClient(s.origin);
    for (let i = 1; i <= 2; i++) {
      const form = await openConsent(authorizeUrl(s.origin, standard(DOC, pkce().challenge, s.resource)));
      expect(form.html).toContain("Doc app");
      expect(fetched.n).toBe(i);
    }
    expect(store.size.clients).toBe(1);
  });
});

describe("a store full of codes not yet redeemed", () => {
  it("refuses the next sign-in with 503 and drops none of them; a redeemed code makes room", async () => {
    const store = new MemoryAuthStore({ maxCodes: 1 });
    const s = await serve({ store });
    const clientId = await registerClient(s.origin);
    const first = await getCode(s, clientId);
    const { challenge } = pkce();
    const form = await openConsent(authorizeUrl(s.origin, standard(clientId, challenge, s.resource)));
    const refused = await submitConsent(s.origin, form);
    expect(refused.status).toBe(503);
    expect(await refused.text()).toContain("The authorization server is full; try again later");
    // the code already given out still redeems
    expect((await redeem(s, clientId, first)).status).toBe(200);
    const next = await getCode(s, clientId);
    expect((await redeem(s, clientId, next)).status).toBe(200);
  });
});

/** A registration sent through `send`: its status. */
const registration = (origin: string, send: typeof fetch = fetch) =>
  send(`${origin}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
  }).then((r) => r.text().then(() => r.status));

describe("counters at their cap", () => {
  it("a crowd of distinct addresses cannot reset the total of registrations by crowding out its counter", async () => {
    const store = new MemoryAuthStore({ maxCounters: 4 });
    const s = await serve({ store, registration: { perAddress: 10, total: 3 } });
    const crowd = Array.from({ length: 10 }, (_, i) => boundFetch(`127.0.0.${i + 2}`));
    const statuses: number[] = [];
    for (const send of crowd) statuses.push(await registration(s.origin, send));
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429, 429, 429, 429, 429]);
    expect(store.size.counters).toBe(4);
    for (const send of crowd) send.agent.destroy();
  });
});

describe("counters full", () => {
  it("a new address still signs in while under the total: a hit not counted is not over", async () => {
    const store = new MemoryAuthStore({ maxCounters: 12 });
    const s = await serve({ store });
    const clientId = await registerClient(s.origin);
    const url = authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource));
    const [two, three] = [boundFetch("127.0.0.2"), boundFetch("127.0.0.3")];
    expect((await two(url, { redirect: "manual" })).status).toBe(200);
    for (let i = 0; store.size.counters < 12; i++) await store.hit(`filler:${i}`, 600_000);
    const res = await three(url, { redirect: "manual" });
    expect(res.status, await res.text()).toBe(200);
    two.agent.destroy();
    three.agent.destroy();
  });
});

describe("callers with no known address", () => {
  it("are held to the totals only, never to one shared per-address bucket", async () => {
    const s = await serve({
      registration: { perAddress: 1, total: 5 },
      authorizations: { perAddress: 1, total: 3 },
    });
    // `handle` called without `info` and with no peer known: no address
    const send = ((input: string, init?: RequestInit) =>
      s.as.handle(new Request(input, init)).then((r) => r!)) as unknown as typeof fetch;
    const clientId = await registerClient(s.origin);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push(await registration(s.origin, send));
    expect(statuses).toEqual([201, 201, 201, 201, 429]);
    const url = authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource));
    const opened: number[] = [];
    for (let i = 0; i < 4; i++) opened.push(await send(url, { redirect: "manual" }).then((r) => r.status));
    expect(opened).toEqual([200, 200, 200, 429]);
  });
});

describe("client metadata documents fetched for callers", () => {
  it("are fetched at most 30 times per address in ten minutes; another address has its own budget", async () => {
    let fetched = 0;
    const s = await serve({
      clientMetadataDocuments: {
        lookup: async () => [{ address: "93.184.215.14" }],
        // no-store: never cached, so each sign-in fetches it again
        fetch: async () => {
          fetched++;
          return new Response(JSON.stringify({ client_id: DOC, redirect_uris: [REDIRECT] }), {
            headers: { "content-type": "application/json", "cache-control": "no-store" },
          });
        },
      },
    });
    const url = authorizeUrl(s.origin, standard(DOC, pkce().challenge, s.resource));
    const [two, three] = [boundFetch("127.0.0.2"), boundFetch("127.0.0.3")];
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push(await two(url).then((r) => r.text().then(() => r.status)));
    expect(statuses.filter((st) => st === 200)).toHaveLength(30);
    const over = await two(url);
    expect(over.status).toBe(429);
    expect(await over.text()).toContain("Too many sign-ins are starting");
    expect(fetched).toBe(30);
    expect((await three(url)).status).toBe(200);
    expect(fetched).toBe(31);
    two.agent.destroy();
    three.agent.destroy();
  });

  it("callers with no known address are held to the total; /token then answers 503, not invalid_client", async () => {
    let fetched = 0;
    const s = await serve({
      clientMetadataFetches: { total: 2 },
      clientMetadataDocuments: {
        lookup: async () => [{ address: "93.184.215.14" }],
        fetch: async () => {
          fetched++;
          return new Response(JSON.stringify({ client_id: DOC, redirect_uris: [REDIRECT] }), {
            headers: { "content-type": "application/json", "cache-control": "no-store" },
          });
        },
      },
    });
    // `handle` called without `info` and with no peer known: no address
    const send = (input: string, init?: RequestInit) => s.as.handle(new Request(input, init)).then((r) => r!);
    const url = authorizeUrl(s.origin, standard(DOC, pkce().challenge, s.resource));
    const opened: number[] = [];
    for (let i = 0; i < 3; i++) opened.push((await send(url)).status);
    expect(opened).toEqual([200, 200, 429]);
    expect(fetched).toBe(2);
    const res = await send(`${s.origin}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", client_id: DOC, code: "x" }).toString(),
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: "temporarily_unavailable" });
    expect(fetched).toBe(2);
  });

  it("a document that cannot be used is not fetched again for a minute", async () => {
    let fetched = 0;
    const s = await serve({
      clientMetadataDocuments: {
        lookup: async () => [{ address: "93.184.215.14" }],
        fetch: async () => {
          fetched++;
          return new Response("gone", { status: 404, headers: { "content-type": "text/plain" } });
        },
      },
    });
    const url = authorizeUrl(s.origin, standard(DOC, pkce().challenge, s.resource));
    const pages: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(url, { redirect: "manual" });
      expect(res.status).toBe(400);
      pages.push(await res.text());
    }
    expect(fetched).toBe(1);
    expect(pages[2]).toContain("metadata document cannot be used");
  });
});

describe("a crowd in one network (an IPv4 /24)", () => {
  it("is held to the network's limit and cannot use up the total; another network still signs in", async () => {
    const s = await serve({ authorizations: { perAddress: 2, perNetwork: 5, total: 8 } });
    const clientId = await registerClient(s.origin);
    const url = authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource));
    const crowd = Array.from({ length: 10 }, (_, i) => boundFetch(`127.0.0.${i + 2}`));
    const statuses: number[] = [];
    for (const send of crowd)
      for (let i = 0; i < 2; i++) statuses.push(await send(url).then((r) => r.text().then(() => r.status)));
    expect(statuses.filter((st) => st === 200)).toHaveLength(5);
    const other = boundFetch("127.0.1.2");
    const res = await other(url);
    expect(res.status, await res.text()).toBe(200);
    for (const send of [...crowd, other]) send.agent.destroy();
  });

  it("registrations too: 4 × perAddress per network by default", async () => {
    const s = await serve({ registration: { perAddress: 1, total: 10 } });
    const crowd = Array.from({ length: 6 }, (_, i) => boundFetch(`127.0.0.${i + 2}`));
    const statuses: number[] = [];
    for (const send of crowd) statuses.push(await registration(s.origin, send));
    expect(statuses).toEqual([201, 201, 201, 201, 429, 429]);
    const other = boundFetch("127.0.1.2");
    expect(await registration(s.origin, other)).toBe(201);
    for (const send of [...crowd, other]) send.agent.destroy();
  });
});

describe("the total of sign-ins", () => {
  it("counts only requests whose client and redirect URI are known: junk uses up none of it", async () => {
    const s = await serve({ authorizations: { perAddress: 100, total: 3 } });
    const clientId = await registerClient(s.origin);
    const junk = [
      authorizeUrl(s.origin, standard("no-such-client", pkce().challenge, s.resource)),
      authorizeUrl(
        s.origin,
        standard(clientId, pkce().challenge, s.resource, { redirect_uri: "https://evil.example/cb" }),
      ),
    ];
    for (let i = 0; i < 5; i++)
      for (const url of junk) expect((await fetch(url, { redirect: "manual" })).status).toBe(400);
    const url = authorizeUrl(s.origin, standard(clientId, pkce().challenge, s.resource));
    const opened: number[] = [];
    for (let i = 0; i < 4; i++) opened.push(await fetch(url, { redirect: "manual" }).then((r) => r.status));
    expect(opened).toEqual([200, 200, 200, 429]);
  });
});

describe("registered clients that never sign anyone in", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("are kept a day (unredeemedTtlMs); one whose code was redeemed is kept while used", async () => {
    const store = new MemoryAuthStore();
    const s = await serve({ store });
    const idle = await registerClient(s.origin);
    const used = await registerClient(s.origin);
    expect((await redeem(s, used, await getCode(s, used))).status).toBe(200);
    // two days on (the clock read by the store, not waited for)
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + 2 * 86_400_000);
    expect(await store.getClient(idle)).toBeUndefined();
    expect(await store.getClient(used)).toMatchObject({ client_id: used, redeemed: true });
  });
});

describe("the network an address is counted in", () => {
  it("is its IPv4 /24 or its IPv6 /48; no network for what is no address", async () => {
    const { networkKey } = await import("../../src/auth/as-context.js");
    expect(networkKey("127.0.0.7")).toBe("127.0.0.0/24");
    expect(networkKey("127.0.1.7")).toBe("127.0.1.0/24");
    expect(networkKey("2001:db8:1:2::5")).toBe("2001:db8:1::/48");
    expect(networkKey("2001:db8:1:ffff::9")).toBe("2001:db8:1::/48");
    expect(networkKey("2001:db8:2::1")).toBe("2001:db8:2::/48");
    expect(networkKey("not an address")).toBeUndefined();
    expect(networkKey(undefined)).toBeUndefined();
  });
});
