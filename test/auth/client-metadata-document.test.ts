// fetchClientMetadata through an injected fetch (as on a platform without node:https): the client_id
// URL's rules, the document's, the Cache-Control → ttlMs table, and what the injected fetch is asked.
import { describe, expect, it } from "vitest";
import {
  ClientMetadataError,
  type ClientMetadataOptions,
  fetchClientMetadata,
} from "../../src/auth/index.js";

const ID = "https://app.example.com/oauth/client.json";

const document = (more: Record<string, unknown> = {}) => ({
  client_id: ID,
  client_name: "Example MCP Client",
  redirect_uris: ["http://127.0.0.1:3000/callback", "https://app.example.com/cb"],
  ...more,
});

/** A public-looking address; nothing connects to it, the injected fetch answers. */
const lookup = async () => [{ address: "93.184.215.14" }];

interface Asked {
  url: string;
  init: RequestInit;
}

function serving(body: unknown, headers: Record<string, string> = {}, status = 200) {
  const asked: Asked[] = [];
  const fetch = async (url: URL, init: RequestInit) => {
    asked.push({ url: url.href, init });
    return new Response(typeof body === "string" ? body : JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json", ...headers },
    });
  };
  return { asked, options: { fetch, lookup } satisfies ClientMetadataOptions };
}

async function refusal(clientId: string, options: ClientMetadataOptions) {
  const error = await fetchClientMetadata(clientId, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClientMetadataError);
  return (error as ClientMetadataError).message;
}

describe("the client_id URL", () => {
  const cases: [string, string][] = [
    ["app.example.com/client.json", "client_id is not a URL"],
    ["ftp://app.example.com/client.json", "client_id must be an https URL"],
    ["http://app.example.com/client.json", "client_id must be an https URL"],
    ["https://app.example.com", "client_id must have a path"],
    ["https://app.example.com/", "client_id must have a path"],
    ["https://app.example.com/client.json#me", "client_id must not have a fragment"],
    ["https://app.example.com/client.json#", "client_id must not have a fragment"],
    ["https://me@app.example.com/client.json", "client_id must not hold a user name or password"],
    ["https://me:pw@app.example.com/client.json", "client_id must not hold a user name or password"],
    ["https://app.example.com/a/../client.json", "client_id must not have . or .. path segments"],
    ["https://app.example.com/./client.json", "client_id must not have . or .. path segments"],
    ["https://app.example.com/a/%2E%2e/client.json", "client_id must not have . or .. path segments"],
    [
      "https://APP.example.com/client.json",
      "client_id must be written as https://app.example.com/client.json",
    ],
    [
      "https://app.example.com:443/client.json",
      "client_id must be written as https://app.example.com/client.json",
    ],
    [
      " https://app.example.com/client.json",
      "client_id must be written as https://app.example.com/client.json",
    ],
    [`https://app.example.com/${"a".repeat(2048)}`, "client_id is longer than 2048 characters"],
  ];
  it.each(cases)("refuses %s", async (clientId, message) => {
    const { asked, options } = serving(document({ client_id: clientId }));
    expect(await refusal(clientId, options)).toBe(message);
    expect(asked).toEqual([]);
  });

  it("takes a port and a query", async () => {
    for (const clientId of ["https://app.example.com:8443/client.json", "https://app.example.com/c?v=2"]) {
      const { options } = serving(document({ client_id: clientId }));
      expect((await fetchClientMetadata(clientId, options)).client.client_id).toBe(clientId);
    }
  });
});

describe("the document", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ client_id: `${ID}?` }, "the document's client_id is not the URL it was fetched from"],
    [{ client_id: undefined }, "the document's client_id is not the URL it was fetched from"],
    [{ client_secret: "s3cret" }, "a client metadata document must not hold client_secret"],
    [{ client_secret_expires_at: 0 }, "a client metadata document must not hold client_secret_expires_at"],
    [
      { token_endpoint_auth_method: "client_secret_basic" },
      "token_endpoint_auth_method must be none: a metadata document client has no secret",
    ],
    [
      { token_endpoint_auth_method: "private_key_jwt" },
      "token_endpoint_auth_method must be none: a metadata document client has no secret",
    ],
    [{ grant_types: "authorization_code" }, "grant_types must be an array of strings"],
    [
      { grant_types: ["authorization_code", "client_credentials"] },
      "grant_types may hold only authorization_code and refresh_token",
    ],
    [{ grant_types: ["refresh_token"] }, "grant_types must include authorization_code"],
    [{ grant_types: [] }, "grant_types must include authorization_code"],
    [{ response_types: ["token"] }, 'response_types must be ["code"]'],
    [{ response_types: ["code", "id_token"] }, 'response_types must be ["code"]'],
    [{ client_name: 42 }, "client_name must be a non-empty string"],
    [{ client_name: "" }, "client_name must be a non-empty string"],
    [{ client_name: "x".repeat(201) }, "client_name is longer than 200 characters"],
    [{ client_name: "Claude\n" }, "client_name must not hold control or text-direction characters"],
    [
      { client_name: "Trusted App\u202egnp.exe" },
      "client_name must not hold control or text-direction characters",
    ],
    [
      { client_name: "\u2066Trusted\u2069" },
      "client_name must not hold control or text-direction characters",
    ],
    // invisible and direction marks: the Arabic letter mark, zero-width space/joiners, the BOM, LRM/RLM, embeddings
    ...[
      "\u061c",
      "\u200b",
      "\u200c",
      "\u200d",
      "\ufeff",
      "\u200e",
      "\u200f",
      "\u202a",
      "\u202d",
      "\u2067",
    ].map(
      (c) =>
        [
          { client_name: `Trusted${c}App` },
          "client_name must not hold control or text-direction characters",
        ] as [Record<string, unknown>, string],
    ),
    [{ client_uri: "javascript:alert(1)" }, "client_uri must be an http(s) URL"],
    [{ logo_uri: "data:image/png;base64,AAAA" }, "logo_uri must be an http(s) URL"],
    [{ logo_uri: `https://app.example.com/${"l".repeat(2048)}` }, "logo_uri is longer than 2048 characters"],
    [{ scope: "a  b" }, "scope must be scope tokens separated by single spaces"],
    [{ scope: 'a "b"' }, "scope must be scope tokens separated by single spaces"],
    [
      { redirect_uris: Array.from({ length: 21 }, (_, i) => `https://app.example.com/cb${i}`) },
      "redirect_uris holds more than 20 URIs",
    ],
  ];
  it.each(cases)("refuses %j", async (more, message) => {
    const { options } = serving(document(more));
    expect(await refusal(ID, options)).toBe(message);
  });

  it("defaults grant_types to authorization_code and keeps only the fields it knows", async () => {
    const { options } = serving(
      document({ software_id: "x", jwks: { keys: [] }, token_endpoint_auth_method: "none" }),
    );
    const { client } = await fetchClientMetadata(ID, options);
    expect(client).toEqual({
      client_id: ID,
      kind: "metadata-document",
      redirect_uris: ["http://127.0.0.1:3000/callback", "https://app.example.com/cb"],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code"],
      client_id_issued_at: expect.any(Number),
      client_name: "Example MCP Client",
    });
  });

  it("takes application/*+json and a charset", async () => {
    for (const type of [
      "application/json; charset=utf-8",
      "application/client-metadata+json",
      "Application/JSON",
    ]) {
      const { options } = serving(document(), { "content-type": type });
      expect((await fetchClientMetadata(ID, options)).client.client_id).toBe(ID);
    }
  });
});

describe("caching", () => {
  const cases: [string | undefined, number][] = [
    [undefined, 300_000],
    ["max-age=600", 600_000],
    ["public, max-age=3600", 3_600_000],
    ['max-age="120"', 120_000],
    ["max-age=5", 60_000],
    ["max-age=0", 60_000],
    ["max-age=999999999", 86_400_000],
    ["max-age=-1", 60_000],
    ["no-store", 0],
    ["max-age=600, no-cache", 0],
    ["No-Store, max-age=600", 0],
    ["private", 300_000],
  ];
  it.each(cases)("Cache-Control %s gives ttlMs %i", async (cacheControl, ttl) => {
    const { options } = serving(document(), cacheControl ? { "cache-control": cacheControl } : {});
    expect((await fetchClientMetadata(ID, options)).ttlMs).toBe(ttl);
  });

  it("bounds max-age by minTtlMs and maxTtlMs, and defaults to defaultTtlMs", async () => {
    const bounds = { minTtlMs: 10_000, maxTtlMs: 20_000, defaultTtlMs: 15_000 };
    const ttl = async (cacheControl?: string) => {
      const { options } = serving(document(), cacheControl ? { "cache-control": cacheControl } : {});
      return (await fetchClientMetadata(ID, { ...options, ...bounds })).ttlMs;
    };
    expect([await ttl("max-age=1"), await ttl("max-age=12"), await ttl("max-age=60"), await ttl()]).toEqual([
      10_000, 12_000, 20_000, 15_000,
    ]);
  });
});

describe("caching without max-age, and a document that aged on its way", () => {
  const DATE = "Thu, 03 Dec 2026 12:00:00 GMT";
  const cases: [Record<string, string>, number][] = [
    [{ expires: "Thu, 03 Dec 2026 12:20:00 GMT", date: DATE }, 1_200_000],
    [{ expires: "Thu, 03 Dec 2026 12:20:00 GMT", date: DATE, age: "200" }, 1_000_000],
    [{ "cache-control": "max-age=600", age: "100" }, 500_000],
    [{ "cache-control": "max-age=600", age: "590" }, 60_000],
    [{ "cache-control": "max-age=600", age: "soon" }, 600_000],
    // max-age wins over Expires
    [{ "cache-control": "max-age=600", expires: "Thu, 03 Dec 2026 12:20:00 GMT", date: DATE }, 600_000],
    // an Expires that is no date, or already past: stale, kept the least time
    [{ expires: "0", date: DATE }, 60_000],
    [{ expires: "Thu, 03 Dec 2026 11:00:00 GMT", date: DATE }, 60_000],
    [{ expires: "Fri, 04 Dec 2026 12:00:00 GMT", date: DATE, "cache-control": "no-store" }, 0],
    [{ date: DATE }, 300_000],
  ];
  it.each(cases)("%o gives ttlMs %i", async (headers, ttl) => {
    const { options } = serving(document(), headers);
    expect((await fetchClientMetadata(ID, options)).ttlMs).toBe(ttl);
  });

  it("counts Expires from now when there is no Date", async () => {
    const expires = new Date(Date.now() + 3_600_000).toUTCString();
    const { options } = serving(document(), { expires });
    const { ttlMs } = await fetchClientMetadata(ID, options);
    expect(ttlMs).toBeGreaterThan(3_500_000);
    expect(ttlMs).toBeLessThanOrEqual(3_600_000);
  });
});

describe("an injected fetch", () => {
  it("is asked for JSON, with redirects left to picomcp", async () => {
    const { asked, options } = serving(document());
    await fetchClientMetadata(ID, options);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.url).toBe(ID);
    expect(asked[0]!.init).toMatchObject({
      method: "GET",
      headers: { accept: "application/json" },
      redirect: "manual",
    });
    expect(asked[0]!.init.signal).toBeInstanceOf(AbortSignal);
  });

  it("is never called for a refused address", async () => {
    const { asked, options } = serving(document());
    expect(await refusal("https://169.254.169.254/latest/meta-data", options)).toBe(
      "the client_id's host leads to a refused address (link-local)",
    );
    expect(await refusal(ID, { ...options, lookup: async () => [{ address: "192.168.0.10" }] })).toBe(
      "the client_id's host leads to a refused address (private)",
    );
    expect(asked).toEqual([]);
  });

  it("refuses the redirect it hands back, opaque or not", async () => {
    expect(await refusal(ID, serving("", { location: "https://elsewhere.example/" }, 307).options)).toBe(
      "the client metadata document redirects (HTTP 307); redirects are not followed",
    );
    const opaque = Response.error();
    Object.defineProperty(opaque, "type", { value: "opaqueredirect" });
    expect(await refusal(ID, { lookup, fetch: async () => opaque })).toBe(
      "the client metadata document redirects (HTTP 302); redirects are not followed",
    );
  });

  it("a fetch that fails, and one that never settles (then aborted at the deadline)", async () => {
    expect(
      await refusal(ID, {
        lookup,
        fetch: async () => {
          throw new TypeError("fetch failed");
        },
      }),
    ).toBe("the client metadata document could not be fetched");
    let signal: AbortSignal | undefined;
    const never = (_url: URL, init: RequestInit) => {
      signal = init.signal ?? undefined;
      return new Promise<Response>(() => {});
    };
    expect(await refusal(ID, { lookup, fetch: never, timeoutMs: 50 })).toBe(
      "the client metadata document was not fetched within 50 ms",
    );
    expect(signal?.aborted).toBe(true);
  });

  it("a lookup that never settles meets the deadline too", async () => {
    const { options } = serving(document());
    expect(await refusal(ID, { ...options, lookup: () => new Promise(() => {}), timeoutMs: 50 })).toBe(
      "the client metadata document was not fetched within 50 ms",
    );
  });

  it("a body past maxBytes is cancelled", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(new Uint8Array(1000).fill(0x20)),
      cancel: () => {
        cancelled = true;
      },
    });
    const fetch = async () => new Response(body, { headers: { "content-type": "application/json" } });
    expect(await refusal(ID, { lookup, fetch, maxBytes: 4096 })).toBe(
      "the client metadata document is larger than 4096 bytes",
    );
    expect(cancelled).toBe(true);
  });
});
