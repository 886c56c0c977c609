// Helpers of the rolling-deploy test: a round-robin proxy that retries nothing (it says when an
// instance refused or reset a connection before answering, and when an answer was cut), and a load
// client that retries exactly what a spec-following client retries by itself: a 503 with
// Retry-After, and a connection reset before any answer came.
import { once } from "node:events";
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";

/** What the proxy saw. */
export interface ProxyStats {
  requests: number;
  /** Requests whose instance refused or reset the connection before answering: their client retries. */
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
  const stats: ProxyStats = { requests: 0, resets: 0, cut: 0 };
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
  const server: Server = createServer((req, res) => {
    stats.requests++;
    const to = req.headers["x-to"];
    const index = typeof to === "string" ? Number(to) : pick();
    let answered = false;
    let clientGone = false;
    const upstream = httpRequest(
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
      if (answered) return;
      if (error.code === "ECONNREFUSED") ready[index] = false;
      stats.resets++;
      res.socket?.resetAndDestroy();
    });
    res.on("close", () => {
      if (!res.writableFinished) clientGone = true;
      upstream.destroy();
    });
    req.pipe(upstream);
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
  /** Retries after a connection reset before any answer. */
  retriedReset: number;
}

/** One answer: status, headers, and the response to read (JSON text, or an SSE stream). */
export interface Answer {
  status: number;
  headers: IncomingMessage["headers"];
  res: IncomingMessage;
}

/** A client on its own loopback address, with connections kept alive, that retries as a spec-following client does. */
export class LoadClient {
  readonly stats: ClientStats = { requests: 0, retried503: 0, retriedReset: 0 };
  readonly #agent: Agent;
  readonly #port: number;

  constructor(proxyPort: number, address: string) {
    this.#port = proxyPort;
    this.#agent = new Agent({ keepAlive: true, localAddress: address });
  }

  /** Sends one request until it gets an answer that is not retryable; `signal` gives up. */
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
        if (signal?.aborted) throw error;
        return undefined;
      });
      if (answer === undefined) {
        this.stats.retriedReset++;
        continue;
      }
      const after = answer.headers["retry-after"];
      if (answer.status !== 503 || after === undefined) return answer;
      answer.res.resume();
      this.stats.retried503++;
      await new Promise((r) => setTimeout(r, Number(after) * 1000));
    }
  }

  /** Sends and reads a JSON answer. */
  async json(headers: { [k: string]: string }, body: unknown): Promise<{ status: number; body: any }> {
    const answer = await this.send("POST", headers, body);
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
