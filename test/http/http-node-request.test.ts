// The node:http bridge hands a fetch handler a lazy Request: it must behave as a full Request for
// whatever a handler does with it (headers, every way to read the body, clone, the signal), over real
// sockets on 127.0.0.1.
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { toNodeListener } from "../../src/http/node.js";
import { readBody } from "../../src/http/request.js";

let http: Server | undefined;
afterEach(() => {
  http?.closeAllConnections();
  http?.close();
  http = undefined;
});

async function listen(
  handler: (request: Request) => Response | Promise<Response>,
  path?: string,
): Promise<number> {
  http = createServer(toNodeListener(handler, path === undefined ? {} : { path }));
  await new Promise<void>((resolve) => http!.listen(0, "127.0.0.1", resolve));
  return (http.address() as AddressInfo).port;
}

/** One request with raw header pairs (duplicates kept); resolves with the status and the body text. */
function send(
  port: number,
  method: string,
  headers: [string, string][],
  body?: string,
  target = "/p?q=1",
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      method,
      path: target,
      headers: (headers.some(([k]) => k === "Host")
        ? headers
        : [["Host", `127.0.0.1:${port}`], ...headers]
      ).flat(),
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const json = (value: unknown) => Response.json(value);

describe("the lazy Request of the node:http bridge", () => {
  it("is a Request with the method, URL and headers (duplicates joined), and reads its body as text", async () => {
    const port = await listen(async (request) =>
      json({
        instance: request instanceof Request,
        method: request.method,
        url: request.url,
        a: request.headers.get("x-a"),
        text: await request.text(),
        used: request.bodyUsed,
      }),
    );
    const answer = await send(
      port,
      "POST",
      [
        ["X-A", "1"],
        ["X-A", "2"],
      ],
      "héllo",
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({
      instance: true,
      method: "POST",
      url: `http://127.0.0.1:${port}/p?q=1`,
      a: "1, 2",
      text: "héllo",
      used: true,
    });
  });

  it("clones, reads JSON, bytes and the body stream like a full Request", async () => {
    const port = await listen(async (request) => {
      const copy = request.clone();
      const reader = copy.body!.getReader();
      let streamed = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        streamed += value.byteLength;
      }
      return json({ parsed: await request.json(), streamed, mode: request.mode, cache: request.cache });
    });
    const answer = await send(port, "POST", [["content-type", "application/json"]], '{"n":[1,2]}');
    expect(JSON.parse(answer.body)).toEqual({
      parsed: { n: [1, 2] },
      streamed: 11,
      mode: "cors",
      cache: "default",
    });
  });

  it("after clone(), hands out its own branch of the body, as a full Request does", async () => {
    const port = await listen(async (request) => {
      const copy = request.clone();
      const own = await new Response(request.body).text();
      return json({ own, copy: await copy.text() });
    });
    const answer = await send(port, "POST", [], "abc");
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ own: "abc", copy: "abc" });
  });

  it("once its body stream is being read, still answers bodyUsed, clone() and the rest", async () => {
    const port = await listen(async (request) => {
      const reader = request.body!.getReader();
      const first = await reader.read();
      let cloned: string;
      try {
        request.clone();
        cloned = "cloned";
      } catch (error) {
        cloned = (error as Error).name;
      }
      return json({ bytes: first.value?.byteLength, used: request.bodyUsed, mode: request.mode, cloned });
    });
    const answer = await send(port, "POST", [], "abc");
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ bytes: 3, used: true, mode: "cors", cloned: "TypeError" });
  });

  it("whose body the MCP handler read is a used Request: bodyUsed, and reading again is refused", async () => {
    const port = await listen(async (request) => {
      const read = await readBody(request, 100);
      const again = await request.text().then(
        (text) => `read ${JSON.stringify(text)}`,
        (error: Error) => error.name,
      );
      return json({ read, used: request.bodyUsed, again });
    });
    const answer = await send(port, "POST", [], "abc");
    expect(JSON.parse(answer.body)).toEqual({
      read: { ok: true, text: "abc" },
      used: true,
      again: "TypeError",
    });
  });

  it("has read-only headers, as a full Request does", async () => {
    const port = await listen(async (request) => {
      const tries = [
        () => request.headers.set("x-a", "2"),
        () => request.headers.append("x-b", "1"),
        () => request.headers.delete("x-a"),
      ].map((t) => {
        try {
          t();
          return "changed";
        } catch (error) {
          return (error as Error).name;
        }
      });
      return json({ tries, a: request.headers.get("x-a"), real: request.clone().headers.get("x-a") });
    });
    const answer = await send(port, "POST", [["X-A", "1"]], "");
    expect(JSON.parse(answer.body)).toEqual({
      tries: ["TypeError", "TypeError", "TypeError"],
      a: "1",
      real: "1",
    });
  });

  it("has no body on GET, and reading one gives the empty string", async () => {
    const port = await listen(async (request) => json({ body: request.body, text: await request.text() }));
    const answer = await send(port, "GET", []);
    expect(JSON.parse(answer.body)).toEqual({ body: null, text: "" });
  });

  it("with a path, has the URL a parsed one would have, whether the target is the path or only leads to it", async () => {
    const port = await listen((request) => json({ url: request.url }), "/mcp");
    const url = async (target: string, host = `127.0.0.1:${port}`) => {
      const answer = await send(port, "GET", [["Host", host]], undefined, target);
      return answer.status === 200 ? JSON.parse(answer.body).url : answer.status;
    };
    expect(await url("/mcp")).toBe(`http://127.0.0.1:${port}/mcp`);
    expect(await url("/mcp", "LocalHost:80")).toBe("http://localhost/mcp");
    expect(await url("/mcp?x=1")).toBe(`http://127.0.0.1:${port}/mcp?x=1`);
    expect(await url("/a/../mcp")).toBe(`http://127.0.0.1:${port}/mcp`);
    expect(await url("/other")).toBe(404);
  });

  it("aborts its signal when the client goes away before the answer", async () => {
    let aborted!: (value: boolean) => void;
    const seen = new Promise<boolean>((r) => (aborted = r));
    const port = await listen(
      (request) =>
        new Promise<Response>((resolve) => {
          request.signal.addEventListener("abort", () => {
            aborted(true);
            resolve(new Response(null, { status: 204 }));
          });
        }),
    );
    const req = httpRequest({ host: "127.0.0.1", port, method: "POST", path: "/" });
    req.on("error", () => {});
    req.write("partial");
    await new Promise((r) => setTimeout(r, 50));
    req.destroy();
    expect(await seen).toBe(true);
  });
});
