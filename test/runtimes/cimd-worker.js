// picomcp/auth's fetchClientMetadata in a Cloudflare Worker (bundled for workerd by
// test/interop/runtimes.test.ts): it loads without node:*, refuses private addresses, and reads a
// document through the fetch it is given. Answers "cimd: ok" or the failure.
import { ClientMetadataError, fetchClientMetadata } from "../../dist/auth/index.js";

const ID = "https://app.example.com/oauth/client.json";

async function refused(clientId, options, message) {
  try {
    await fetchClientMetadata(clientId, options);
  } catch (error) {
    if (!(error instanceof ClientMetadataError)) throw error;
    if (error.message !== message) throw new Error(`${clientId}: "${error.message}", not "${message}"`);
    return;
  }
  throw new Error(`${clientId} was not refused`);
}

async function checks() {
  await refused(
    "https://10.0.0.1/client.json",
    {},
    "the client_id's host leads to a refused address (private)",
  );
  await refused(
    "https://[fd00::1]/c.json",
    {},
    "the client_id's host leads to a refused address (unique-local)",
  );
  await refused("http://app.example.com/client.json", {}, "client_id must be an https URL");
  const lookup = async () => [{ address: "169.254.169.254" }];
  await refused(ID, { lookup }, "the client_id's host leads to a refused address (link-local)");
  // no socket leaves the worker below: the document comes from the fetch it is given
  const asked = [];
  const fetch = async (url, init) => {
    asked.push(init.redirect);
    return Response.json({ client_id: url.href, redirect_uris: ["https://app.example.com/cb"] });
  };
  const { client, ttlMs } = await fetchClientMetadata(ID, {
    fetch,
    lookup: async () => [{ address: "93.184.215.14" }],
  });
  if (client.client_id !== ID || ttlMs !== 300_000 || asked.join() !== "manual")
    throw new Error(`read: ${JSON.stringify({ client, ttlMs, asked })}`);
  const redirecting = async () =>
    new Response(null, { status: 302, headers: { location: "https://x.example/" } });
  await refused(
    ID,
    { fetch: redirecting, lookup: async () => [{ address: "93.184.215.14" }] },
    "the client metadata document redirects (HTTP 302); redirects are not followed",
  );
}

export default {
  async fetch() {
    try {
      await checks();
      return new Response("cimd: ok");
    } catch (error) {
      return new Response(String(error?.stack ?? error), { status: 500 });
    }
  },
};
