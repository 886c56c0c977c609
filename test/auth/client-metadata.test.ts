// fetchClientMetadata on Node against real servers on 127.0.0.x: documents that are valid, huge, slow,
// redirecting or mistyped, and names that resolve (or rebind) to addresses it must never connect to.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  ClientMetadataError,
  type ClientMetadataOptions,
  fetchClientMetadata,
  type ResolvedAddress,
} from "../../src/auth/index.js";

/** A server on `host` that counts the connections it accepts and knows which are still open. */
interface Listener {
  origin: string;
  port: number;
  accepted(): number;
  open(): number;
  requests: string[];
}

const listeners: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of listeners.splice(0)) await close();
});

async function listen(
  host: string,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  port = 0,
): Promise<Listener> {
  const server = createServer(handle);
  const sockets = new Set<Socket>();
  let accepted = 0;
  const requests: string[] = [];
  server.on("connection", (socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("request", (req) => requests.push(req.url ?? ""));
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  listeners.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    origin: `http://${host}:${bound}`,
    port: bound,
    accepted: () => accepted,
    open: () => sockets.size,
    requests,
  };
}

/** Serves `body` as JSON with `headers`. */
const json =
  (body: unknown, headers: Record<string, string> = {}) =>
  (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { "content-type": "application/json", ...headers });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  };

const document = (clientId: string, more: Record<string, unknown> = {}) => ({
  client_id: clientId,
  client_name: "Example MCP Client",
  client_uri: "https://app.example.com",
  logo_uri: "https://app.example.com/logo.png",
  redirect_uris: ["http://127.0.0.1:3000/callback", "http://localhost:3000/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
  scope: "notes:read notes:write",
  ...more,
});

/** The error `fetchClientMetadata` throws, with its message and the operator's detail. */
async function refusal(clientId: string, options?: ClientMetadataOptions) {
  const error = await fetchClientMetadata(clientId, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClientMetadataError);
  return error as ClientMetadataError;
}

/** Counts the TCP client sockets Node creates while `run` runs. */
async function socketsMadeBy(run: () => Promise<unknown>): Promise<number> {
  let made = 0;
  const count = () => made++;
  subscribe("net.client.socket", count);
  try {
    await run();
  } finally {
    unsubscribe("net.client.socket", count);
  }
  return made;
}

describe("fetchClientMetadata on Node, against servers on 127.0.0.x", () => {
  it("reads a valid document into a ClientRecord, with its max-age as ttlMs", async () => {
    let clientId = "";
    const server = await listen("127.0.0.2", (req, res) =>
      json(document(clientId), { "cache-control": "public, max-age=600" })(req, res),
    );
    clientId = `${server.origin}/oauth/client.json`;
    const before = Math.floor(Date.now() / 1000);
    const { client, ttlMs } = await fetchClientMetadata(clientId, { allowLoopback: true });
    expect(client).toEqual({
      client_id: clientId,
      kind: "metadata-document",
      redirect_uris: ["http://127.0.0.1:3000/callback", "http://localhost:3000/callback"],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      client_id_issued_at: expect.any(Number),
      client_name: "Example MCP Client",
      client_uri: "https://app.example.com",
      logo_uri: "https://app.example.com/logo.png",
      scope: "notes:read notes:write",
    });
    expect(client.client_id_issued_at).toBeGreaterThanOrEqual(before);
    expect(ttlMs).toBe(600_000);
    expect(server.requests).toEqual(["/oauth/client.json"]);
    // one connection of its own, closed once read
    await expect.poll(() => server.open()).toBe(0);
  });

  it("refuses loopback without allowLoopback, before connecting", async () => {
    const server = await listen("127.0.0.2", json({}));
    const made = await socketsMadeBy(async () => {
      expect((await refusal(`${server.origin}/client.json`)).message).toBe("client_id must be an https URL");
      const https = await refusal(`https://127.0.0.2:${server.port}/client.json`);
      expect(https.message).toBe("the client_id's host leads to a refused address (loopback)");
      expect(https.detail).toBe("127.0.0.2");
      expect((await refusal(`https://localhost:${server.port}/client.json`)).message).toBe(
        "the client_id's host leads to a refused address (loopback)",
      );
    });
    expect(made).toBe(0);
    expect(server.accepted()).toBe(0);
  });

  it("stops reading a never-ending body past maxBytes and closes the connection", async () => {
    let written = 0;
    const server = await listen("127.0.0.3", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(1024, 0x20);
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) written += chunk.length;
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    });
    const started = Date.now();
    const error = await refusal(`${server.origin}/client.json`, { allowLoopback: true, timeoutMs: 15_000 });
    expect(error.message).toBe("the client metadata document is larger than 5120 bytes");
    expect(Date.now() - started).toBeLessThan(15_000);
    await expect.poll(() => server.open()).toBe(0);
    // the server wrote far less than it would have in 15 s: the reader stopped, and so did it
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it("refuses a declared Content-Length over maxBytes without reading the body", async () => {
    const server = await listen("127.0.0.3", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "2000" });
      res.write("{"); // and nothing more: only the header can have refused it
    });
    const error = await refusal(`${server.origin}/client.json`, { allowLoopback: true, maxBytes: 1000 });
    expect(error.message).toBe("the client metadata document is larger than 1000 bytes");
    await expect.poll(() => server.open()).toBe(0);
  });

  it("gives up on a server that never answers at the deadline, and hangs up", async () => {
    const server = await listen("127.0.0.4", () => {});
    const started = performance.now();
    const error = await refusal(`${server.origin}/client.json`, { allowLoopback: true, timeoutMs: 300 });
    expect(error.message).toBe("the client metadata document was not fetched within 300 ms");
    expect(performance.now() - started).toBeGreaterThanOrEqual(299);
    await expect.poll(() => server.open()).toBe(0);
  });

  it("counts the body's time too: a body that trickles forever meets the same deadline", async () => {
    const server = await listen("127.0.0.4", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{");
    });
    const error = await refusal(`${server.origin}/client.json`, { allowLoopback: true, timeoutMs: 300 });
    expect(error.message).toBe("the client metadata document was not fetched within 300 ms");
    await expect.poll(() => server.open()).toBe(0);
  });

  it("refuses a redirect without ever contacting its target", async () => {
    const target = await listen("127.0.0.6", json({}));
    const server = await listen("127.0.0.5", (_req, res) => {
      res.writeHead(302, { location: `${target.origin}/client.json` });
      res.end();
    });
    for (const [status, text] of [
      [302, "HTTP 302"],
      [307, "HTTP 307"],
      [308, "HTTP 308"],
    ] as const) {
      const redirecting = await listen("127.0.0.5", (_req, res) => {
        res.writeHead(status, { location: `${target.origin}/client.json` });
        res.end();
      });
      const error = await refusal(`${redirecting.origin}/client.json`, { allowLoopback: true });
      expect(error.message).toBe(
        `the client metadata document redirects (${text}); redirects are not followed`,
      );
    }
    await refusal(`${server.origin}/client.json`, { allowLoopback: true });
    expect(target.accepted()).toBe(0);
  });

  it("refuses other statuses, other content types and bodies that are no JSON object", async () => {
    const cases: [(req: IncomingMessage, res: ServerResponse) => void, string][] = [
      [
        (_q, res) => res.writeHead(404, { "content-type": "application/json" }).end("{}"),
        "the client metadata document answered HTTP 404",
      ],
      [
        (_q, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html></html>"),
        "the client metadata document is not served as application/json",
      ],
      [
        (_q, res) => res.writeHead(200).end("{}"),
        "the client metadata document is not served as application/json",
      ],
      [json("{not json"), "the client metadata document is not valid UTF-8 JSON"],
      [
        json(Buffer.from([0x7b, 0xff, 0x7d]).toString("latin1")),
        "the client metadata document is not valid UTF-8 JSON",
      ],
      [json("[]"), "the client metadata document is not a JSON object"],
      [json("null"), "the client metadata document is not a JSON object"],
    ];
    for (const [handle, message] of cases) {
      const server = await listen("127.0.0.7", handle);
      expect((await refusal(`${server.origin}/client.json`, { allowLoopback: true })).message).toBe(message);
    }
  });

  it("refuses a document whose client_id is not the URL it came from", async () => {
    const server = await listen("127.0.0.8", (req, res) =>
      json(document(`http://127.0.0.8:${(req.socket.localPort ?? 0) + 1}/client.json`))(req, res),
    );
    for (const path of ["/client.json", "/client.json?v=1"]) {
      const error = await refusal(`${server.origin}${path}`, { allowLoopback: true });
      expect(error.message).toBe("the document's client_id is not the URL it was fetched from");
    }
  });

  it("refuses a document with invalid redirect URIs", async () => {
    let redirect_uris: unknown;
    const server = await listen("127.0.0.9", (req, res) =>
      json(document(`http://127.0.0.9:${req.socket.localPort}/client.json`, { redirect_uris }))(req, res),
    );
    const cases: [unknown, string][] = [
      [undefined, "redirect_uris must be a non-empty array"],
      [[], "redirect_uris must be a non-empty array"],
      ["https://app.example.com/cb", "redirect_uris must be a non-empty array"],
      [[42], "redirect_uris[0] must be a string of at most 2048 characters"],
      [["/callback"], "redirect_uris[0] must be an absolute URI"],
      [["https://app.example.com/cb", "app.example.com/cb"], "redirect_uris[1] must be an absolute URI"],
      [["https://app.example.com/cb#x"], "redirect_uris[0] must not have a fragment"],
      [["https://app.example.com/cb#"], "redirect_uris[0] must not have a fragment"],
      [["javascript:alert(1)"], "redirect_uris[0] must not use javascript:"],
      [["http://app.example.com/cb"], "redirect_uris[0] must be https, or http on a loopback host"],
      [["https://app.example.com/a b"], "redirect_uris[0] must not hold spaces or control characters"],
    ];
    for (const [uris, message] of cases) {
      redirect_uris = uris;
      const error = await refusal(`${server.origin}/client.json`, { allowLoopback: true });
      expect(error.message).toBe(message);
    }
  });
});

describe("fetchClientMetadata refuses private addresses before connecting", () => {
  const bad: [string, string][] = [
    ["10.0.0.1", "private"],
    ["169.254.169.254", "link-local"],
    ["::1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["fd00::1", "unique-local"],
    ["100.64.0.1", "shared"],
    ["0.0.0.0", "unspecified"],
    ["fe80::1", "link-local"],
    ["224.0.0.251", "multicast"],
    ["255.255.255.255", "broadcast"],
  ];

  it.each(bad)("a name resolving to %s (%s)", async (address, kind) => {
    const asked: string[] = [];
    const lookup = async (name: string): Promise<ResolvedAddress[]> => {
      asked.push(name);
      return [{ address }];
    };
    let error: ClientMetadataError | undefined;
    const made = await socketsMadeBy(async () => {
      error = await refusal("https://cimd.test/client.json", { lookup });
    });
    expect(error?.message).toBe(`the client_id's host leads to a refused address (${kind})`);
    expect(error?.detail).toBe(address);
    expect(asked).toEqual(["cimd.test"]);
    expect(made).toBe(0);
  });

  it("a name with one good address and one bad: refused", async () => {
    const lookup = async () => [{ address: "93.184.215.14" }, { address: "10.1.2.3" }];
    expect((await refusal("https://cimd.test/client.json", { lookup })).message).toBe(
      "the client_id's host leads to a refused address (private)",
    );
  });

  it("address literals in the client_id, in every spelling the URL parser accepts", async () => {
    const lookup = async () => {
      throw new Error("no lookup for a literal");
    };
    const cases: [string, string][] = [
      ["https://10.0.0.1/client.json", "private"],
      ["https://169.254.169.254/latest/meta-data", "link-local"],
      ["https://[::ffff:a00:1]/client.json", "private"],
      ["https://[fd00::1]/client.json", "unique-local"],
      ["https://[::1]/client.json", "loopback"],
      ["https://100.64.0.1/client.json", "shared"],
    ];
    const made = await socketsMadeBy(async () => {
      for (const [url, kind] of cases)
        expect((await refusal(url, { lookup })).message).toBe(
          `the client_id's host leads to a refused address (${kind})`,
        );
      // spellings the URL parser turns into the dotted quad: refused as the address they are
      for (const url of ["https://0x7f.1/c.json", "https://2130706433/c.json", "https://0177.0.0.1/c.json"])
        expect((await refusal(url, { lookup })).message).toBe(
          `client_id must be written as https://127.0.0.1/c.json`,
        );
    });
    expect(made).toBe(0);
  });

  it("a name the resolver does not know", async () => {
    const error = await refusal("https://cimd.test/client.json", {
      lookup: async () => {
        throw new Error("ENOTFOUND cimd.test");
      },
    });
    expect(error.message).toBe("the client_id's host could not be resolved");
    expect(error.detail).toBe("Error: ENOTFOUND cimd.test");
    expect((await refusal("https://cimd.test/client.json", { lookup: async () => [] })).message).toBe(
      "the client_id's host could not be resolved",
    );
  });

  it("DNS rebinding: a name that answers an allowed address first and a private one at connect time", async () => {
    const server = await listen("127.0.0.10", json({}));
    const answers = ["127.0.0.10", "10.0.0.1"];
    const asked: string[] = [];
    const lookup = async (name: string) => {
      asked.push(name);
      return [{ address: answers[Math.min(asked.length - 1, 1)]! }];
    };
    const error = await refusal(`https://rebind.test:${server.port}/client.json`, {
      lookup,
      allowLoopback: true,
    });
    expect(error.message).toBe("the client_id's host leads to a refused address (private)");
    expect(error.detail).toBe("10.0.0.1");
    // the early check passed, the connection's own lookup was refused: nothing reached the listener
    expect(asked).toEqual(["rebind.test", "rebind.test"]);
    expect(server.accepted()).toBe(0);
  });

  it("allowAddress lets one refused address through (and the connection then goes there)", async () => {
    const server = await listen("127.0.0.11", json({}));
    const kinds: string[] = [];
    const error = await refusal(`https://trusted.test:${server.port}/client.json`, {
      lookup: async () => [{ address: "127.0.0.11" }],
      allowAddress: (address, kind) => {
        kinds.push(kind);
        return address === "127.0.0.11";
      },
    });
    // a plain-HTTP listener cannot speak TLS: the fetch fails, but only after connecting
    expect(error.message).toBe("the client metadata document could not be fetched");
    expect(kinds).toEqual(["loopback", "loopback"]);
    await expect.poll(() => server.accepted()).toBe(1);
  });

  it("refuses http on a host that is not loopback, and a loopback name that resolves elsewhere", async () => {
    const lookup = async () => [{ address: "10.0.0.1" }];
    expect((await refusal("http://cimd.test/client.json", { allowLoopback: true, lookup })).message).toBe(
      "client_id must be an https URL",
    );
    expect((await refusal("http://93.184.215.14/client.json", { allowLoopback: true })).message).toBe(
      "client_id must be an https URL",
    );
    const elsewhere = await refusal("http://localhost:9/client.json", { allowLoopback: true, lookup });
    expect(elsewhere.message).toBe("an http client_id must lead to loopback addresses only");
  });

  it("keeps to allowedHosts, a list or a predicate", async () => {
    const lookup = async () => [{ address: "10.0.0.1" }];
    expect(
      (await refusal("https://other.test/client.json", { lookup, allowedHosts: ["cimd.test"] })).message,
    ).toBe("the client_id's host is not allowed");
    expect(
      (
        await refusal("https://other.test/client.json", {
          lookup,
          allowedHosts: (h) => h.endsWith(".example"),
        })
      ).message,
    ).toBe("the client_id's host is not allowed");
    // an allowed host is still held to the address checks
    expect(
      (await refusal("https://cimd.test/client.json", { lookup, allowedHosts: ["cimd.test"] })).message,
    ).toBe("the client_id's host leads to a refused address (private)");
  });
});

describe("fetchClientMetadata under a crowd", () => {
  it("makes one fetch for many simultaneous calls naming one URL, and a new one after", async () => {
    let clientId = "";
    const server = await listen("127.0.0.12", (req, res) => json(document(clientId))(req, res));
    clientId = `${server.origin}/client.json`;
    const options = { allowLoopback: true };
    const results = await Promise.all(
      Array.from({ length: 20 }, () => fetchClientMetadata(clientId, options)),
    );
    expect(server.requests).toEqual(["/client.json"]);
    expect(new Set(results.map((r) => r.client)).size).toBe(20); // a record of its own each
    expect(results.every((r) => r.client.client_id === clientId)).toBe(true);
    await fetchClientMetadata(clientId, options);
    expect(server.requests).toEqual(["/client.json", "/client.json"]);
  });

  it("shares a refusal the same way, and forgets it once given", async () => {
    const server = await listen("127.0.0.12", (_req, res) => res.writeHead(500).end());
    const options = { allowLoopback: true };
    const errors = await Promise.all(
      Array.from({ length: 5 }, () => refusal(`${server.origin}/client.json`, options)),
    );
    expect(errors.map((e) => e.message)).toEqual(
      Array.from({ length: 5 }, () => "the client metadata document answered HTTP 500"),
    );
    expect(server.requests).toHaveLength(1);
    await refusal(`${server.origin}/client.json`, options);
    expect(server.requests).toHaveLength(2);
  });
});

describe("fetchClientMetadata and hooks that fail", () => {
  it("a lookup that throws at once, on the early check or at connect time, is a refusal", async () => {
    let calls = 0;
    const lookup = (): Promise<ResolvedAddress[]> => {
      calls++;
      if (calls === 1) return Promise.resolve([{ address: "127.0.0.13" }]);
      throw new Error("resolver broke");
    };
    const server = await listen("127.0.0.13", json({}));
    const error = await refusal(`https://flaky.test:${server.port}/client.json`, {
      lookup,
      allowLoopback: true,
    });
    expect(error.message).toBe("the client_id's host could not be resolved");
    expect(error.detail).toBe("Error: resolver broke");
    expect(calls).toBe(2);
    expect(server.accepted()).toBe(0);
  });
});
