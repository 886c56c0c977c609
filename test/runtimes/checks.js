// The checks behind test/runtimes.test.ts: picomcp's Streamable HTTP answered through `handle`, a
// (Request) => Promise<Response> that is either the handler itself (Node, Deno, Bun) or fetch to a
// worker (workerd). Uses no Node API.

/** Runs every check against `handle`; `origin` is the URL the requests name. Throws on the first failure. */
export async function runChecks(handle, origin = "http://127.0.0.1:8000") {
  const host = new URL(origin).host;
  const headers = {
    host,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const post = (body, extra = {}) =>
    handle(
      new Request(`${origin}/mcp`, {
        method: "POST",
        headers: { ...headers, ...extra },
        body: JSON.stringify(body),
      }),
    );
  const check = (ok, what) => {
    if (!ok) throw new Error(`portable check failed: ${what}`);
  };

  const init = await post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "rt", version: "1" } },
  });
  check(init.status === 200, `initialize status ${init.status}`);
  const session = init.headers.get("mcp-session-id");
  check(/^[\x21-\x7e]+$/.test(session ?? ""), "a visible-ASCII session id");
  check((await init.json()).result.serverInfo.name === "portable", "serverInfo");
  const s = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };

  const read = await post(
    { jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "files://a/b%20c" } },
    s,
  );
  const contents = (await read.json()).result.contents;
  check(contents[0].blob === btoa("a/b c"), `blob ${contents[0].blob}`);

  const traversal = await post(
    { jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: "files://../etc" } },
    s,
  );
  check((await traversal.json()).error.code === -32002, "traversal refused");

  const call = await post(
    {
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "slow_count", arguments: { n: 3 }, _meta: { progressToken: "p" } },
    },
    s,
  );
  check(call.headers.get("content-type") === "text/event-stream", "progress switches the answer to SSE");
  const events = (await call.text())
    .split("\n")
    .filter((l) => l.startsWith("data: ") && l.length > 6)
    .map((l) => JSON.parse(l.slice(6)));
  check(events.filter((e) => e.method === "notifications/progress").length === 3, "three progress events");
  check(events.at(-1).result.content[0].text === "counted to 3", "the result last");

  const bad = await handle(
    new Request(`${origin}/mcp`, {
      method: "POST",
      headers: { ...headers, origin: "http://evil.example" },
      body: "{}",
    }),
  );
  check(bad.status === 403, "a foreign Origin is refused");

  // 2026-07-28 on the same endpoint: no session, headers checked, the base64 form decoded
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  const modern = (region) =>
    post(
      {
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "where", arguments: { region: "Zürich" }, _meta },
      },
      {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "where",
        "mcp-param-region": region,
      },
    );
  const utf8 = btoa(String.fromCharCode(...new TextEncoder().encode("Zürich")));
  const ok = await modern(`=?base64?${utf8}?=`);
  check(ok.status === 200 && ok.headers.get("mcp-session-id") === null, `modern status ${ok.status}`);
  const answer = await ok.json();
  check(answer.result.resultType === "complete", "resultType");
  check(answer.result.content[0].text === "region=Zürich", `modern ${JSON.stringify(answer)}`);
  const mismatch = await modern("=?base64?SGVsbG8?=");
  check(mismatch.status === 400 && (await mismatch.json()).error.code === -32020, "bad base64 is -32020");

  const del = await handle(new Request(`${origin}/mcp`, { method: "DELETE", headers: { host, ...s } }));
  check(del.status === 204, `DELETE ${del.status}`);
}
