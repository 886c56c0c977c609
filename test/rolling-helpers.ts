// Helpers of the rolling-deploy test: a round-robin proxy that sends a request to another instance
// only when the connection to the first was refused (nothing of it was sent), as a balancer does, and
// says when an instance reset a connection before answering and when an answer was cut; and a load
// client that retries exactly what a spec-following client retries by itself: a 503 with Retry-After.
// A connection reset is never retried (the request may have been served): it is counted, and the
// test asserts there was none.
import { once } from "node:events";
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";

/** What the proxy saw. */
export interface ProxyStats {
  requests: number;
  /** Requests sent to another instance because the connection to the first was refused (nothing was sent). */
  refused: number;
  /** Requests whose instance reset the connection before answering (it may have served them): their client's connection is reset too. */
  resets: number;
  /** Answers that broke off after they began (a stream cut without its end): failures. */
  cut: number;
}

/**
 * A round-robin proxy over the instances on `ports` (each request to the next; `x-to: <index>` picks
 * one), keeping connections to them alive, as a balancer does. Like a balancer it polls each
 * instance's `/readyz` (every `probeMs`) and sends nothing to one that is not ready, or that refused
 * a connection, until it answers ready again. It never retries: a connection the instance refused or
 * reset before answering resets the client's connection too.
 */
export async function startRoundRobin(
  ports: readonly number[],
  probeMs = 50,
): Promise<{ url: string; port: number; stats: ProxyStats; close(): Promise<void> }> {
  let next = 0;
  const agent = new Agent({ keepAlive: true });
  const stats: ProxyStats = { requests: 0, refused: 0, resets: 0, cut: 0 };
  const ready = ports.map(() => true);
  const probe = (i: number) => {
    const req = httpRequest({ host: "127.0.0.1", port: ports[i], path: "/readyz", agent: false }, (res) => {
      ready[i] = res.statusCode === 200;
      res.resume();
    });
    req.on("error", () => (ready[i] = false));
    req.end();
  };
  const probing = setInterval(() => {
    for (let i = 0; i < ports.length; i++) probe(i);
  }, probeMs);
  const pick = () => {
    for (let tries = 0; tries < ports.length; tries++) {
      const i = next++ % ports.length;
      if (ready[i]) return i;
    }
    return next++ % ports.length;
  };
  const server: Server = createServer(async (req, res) => {
    stats.requests++;
    const to = req.headers["x-to"];
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let answered = false;
    let clientGone = false;
    let upstream: ReturnType<typeof httpRequest> | undefined;
    res.on("close", () => {
      if (!res.writableFinished) clientGone = true;
      upstream?.destroy();
    });
    const forward = (index: number, tries: number) => {
      upstream = httpRequest(
        {
          host: "127.0.0.1",
          port: ports[index],
          path: req.url,
          method: req.method,
          headers: req.headers,
          agent,
        },
        (answer) => {
          answered = true;
          res.writeHead(answer.statusCode!, { ...answer.headers, "x-backend": String(index) });
          // the headers go on at once, as a balancer's do: a resumed SSE stream may have no event yet
          res.flushHeaders();
          answer.pipe(res);
          answer.on("close", () => {
            if (answer.complete || clientGone) return;
            stats.cut++;
            res.destroy();
          });
        },
      );
      upstream.on("error", (error: NodeJS.ErrnoException) => {
        if (answered || clientGone) return;
        // refused: nothing was sent, so the next instance gets it (a balancer's "next upstream")
        if (error.code === "ECONNREFUSED" && typeof to !== "string" && tries < ports.length) {
          ready[index] = false;
          stats.refused++;
          return forward(pick(), tries + 1);
        }
        stats.resets++;
        res.socket?.resetAndDestroy();
      });
      upstream.end(body);
    };
    forward(typeof to === "string" ? Number(to) : pick(), 1);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    stats,
    async close() {
      clearInterval(probing);
      server.closeAllConnections();
      server.close();
      agent.destroy();
      await once(server, "close");
    },
  };
}

/** What a load client did. */
export interface ClientStats {
  requests: number;
  /** Retries after a 503 with Retry-After. */
  retried503: number;
  /** Connections reset before any answer: never retried (the request may have been served), each a failure. */
  resets: number;
}

/** One answer: status, headers, and the response to read (JSON text, or an SSE stream). */
export interface Answer {
  status: number;
  headers: IncomingMessage["headers"];
  res: IncomingMessage;
}

/** A client on its own loopback address, with connections kept alive, that retries as a spec-following client does. */
export class LoadClient {
  readonly stats: ClientStats = { requests: 0, retried503: 0, resets: 0 };
  readonly #agent: Agent;
  readonly #port: number;

  constructor(proxyPort: number, address: string) {
    this.#port = proxyPort;
    this.#agent = new Agent({ keepAlive: true, localAddress: address });
  }

  /** Sends one request until it gets an answer that is not retryable; `signal` gives up; a reset rejects. */
  async send(
    method: string,
    headers: { [k: string]: string },
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<Answer> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    for (;;) {
      this.stats.requests++;
      const answer = await this.#once(method, headers, text, signal).catch((error: unknown) => {
        if (!signal?.aborted) this.stats.resets++;
        throw error;
      });
      const after = answer.headers["retry-after"];
      if (answer.status !== 503 || after === undefined) return answer;
      answer.res.resume();
      this.stats.retried503++;
      await new Promise((r) => setTimeout(r, Number(after) * 1000));
    }
  }

  /** Sends and reads a JSON answer; a reset gives status 0. */
  async json(headers: { [k: string]: string }, body: unknown): Promise<{ status: number; body: any }> {
    const answer = await this.send("POST", headers, body).catch(() => undefined);
    // a reset: status 0, and the failure is the caller's to record
    if (answer === undefined) return { status: 0, body: { error: "the connection was reset" } };
    let text = "";
    for await (const chunk of answer.res) text += chunk;
    return { status: answer.status, body: text ? JSON.parse(text) : undefined };
  }

  #once(
    method: string,
    headers: { [k: string]: string },
    text: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: "127.0.0.1", port: this.#port, path: "/mcp", method, headers, agent: this.#agent, signal },
        (res) => resolve({ status: res.statusCode!, headers: res.headers, res }),
      );
      req.on("error", reject);
      req.end(text);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** One SSE event. */
export interface Event {
  id?: string;
  retry?: number;
  data?: any;
}

/** Reads an SSE answer to its end, handing each event to `onEvent`; resolves whether it ended cleanly. */
export function readSse(res: IncomingMessage, onEvent: (e: Event) => void): Promise<boolean> {
  return new Promise((resolve) => {
    let buf = "";
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      buf += chunk;
      let end = buf.indexOf("\n\n");
      while (end !== -1) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        end = buf.indexOf("\n\n");
        const e: Event = {};
        let any = false;
        for (const line of block.split("\n")) {
          if (line.startsWith("id: ")) e.id = line.slice(4);
          else if (line.startsWith("retry: ")) e.retry = Number(line.slice(7));
          else if (line.startsWith("data: ") && line.length > 6) e.data = JSON.parse(line.slice(6));
          else continue;
          any = true;
        }
        if (any) onEvent(e);
      }
    });
    res.on("close", () => resolve(res.complete));
  });
}
