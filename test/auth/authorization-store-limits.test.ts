// The authorization server when its store is at a cap: a cached client metadata document that finds no
// room is used uncached, registered clients expire unused, and counters are never dropped while live.
import { describe, expect, it } from "vitest";
import { MemoryAuthStore } from "../../src/auth/index.js";
import {
  authorizeUrl,
  openConsent,
  pkce,
  REDIRECT,
  registerClient,
  standard,
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
