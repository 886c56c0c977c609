// fetchClientMetadata on this runtime (Node, Deno, Bun), from dist/: a document served on 127.0.0.1 is
// read, a redirect is refused without reaching its target, a never-ending body stops at the cap, and
// private addresses (literal, or from a lookup) are refused. Prints "cimd: ok" or throws.
import { ClientMetadataError, fetchClientMetadata } from "../../dist/auth/index.js";

const hits = [];
let origin = "";
const filler = new Uint8Array(1024).fill(0x20);
function handle(request) {
  const path = new URL(request.url).pathname;
  hits.push(path);
  if (path === "/client.json")
    return Response.json(
      {
        // the URL it was asked by: 127.0.0.1 or localhost
        client_id: `http://${request.headers.get("host")}/client.json`,
        client_name: "Check",
        redirect_uris: ["http://127.0.0.1:9/cb"],
      },
      { headers: { "cache-control": "max-age=600" } },
    );
  if (path === "/redirect")
    return new Response(null, { status: 302, headers: { location: `${origin}/target` } });
  if (path === "/huge")
    return new Response(new ReadableStream({ pull: (c) => c.enqueue(filler) }), {
      headers: { "content-type": "application/json" },
    });
  return new Response("{}", { status: 404 });
}

/** Serves `handle` on 127.0.0.1 with this runtime's own server; returns its port and a stop function. */
async function serve() {
  if (globalThis.Deno) {
    const server = globalThis.Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handle);
    return { port: server.addr.port, stop: () => server.shutdown() };
  }
  if (globalThis.Bun) {
    const server = globalThis.Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handle });
    return { port: server.port, stop: () => server.stop(true) };
  }
  const { createServer } = await import("node:http");
  const server = createServer(async (req, res) => {
    const answer = await handle(
      new Request(`http://${req.headers.host}${req.url}`, { headers: req.headers }),
    );
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (!answer.body) return res.end();
    for await (const chunk of answer.body)
      if (!res.write(chunk)) await new Promise((r) => res.once("drain", r));
    res.end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: server.address().port,
    stop: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

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

const { port, stop } = await serve();
origin = `http://127.0.0.1:${port}`;
try {
  const { client, ttlMs } = await fetchClientMetadata(`${origin}/client.json`, { allowLoopback: true });
  if (client.client_id !== `${origin}/client.json` || client.client_name !== "Check" || ttlMs !== 600_000)
    throw new Error(`read: ${JSON.stringify({ client, ttlMs })}`);
  // a name: resolved by the runtime's own resolver (Deno.resolveDns, Bun.dns.lookup, node:dns) and checked
  const byName = `http://localhost:${port}/client.json`;
  if ((await fetchClientMetadata(byName, { allowLoopback: true })).client.client_id !== byName)
    throw new Error("read by name");
  await refused(`${origin}/client.json`, {}, "client_id must be an https URL");
  await refused(byName, {}, "client_id must be an https URL");
  await refused(
    `${origin}/redirect`,
    { allowLoopback: true },
    "the client metadata document redirects (HTTP 302); redirects are not followed",
  );
  await refused(
    `${origin}/huge`,
    { allowLoopback: true },
    "the client metadata document is larger than 5120 bytes",
  );
  if (hits.includes("/target")) throw new Error("the redirect's target was reached");
  await refused(
    "https://10.0.0.1/client.json",
    {},
    "the client_id's host leads to a refused address (private)",
  );
  await refused(
    "https://[::ffff:a9fe:a9fe]/latest",
    {},
    "the client_id's host leads to a refused address (link-local)",
  );
  await refused(
    "https://cimd.test/client.json",
    { lookup: async () => [{ address: "fd00::1" }] },
    "the client_id's host leads to a refused address (unique-local)",
  );
} finally {
  await stop();
}
console.log("cimd: ok");
