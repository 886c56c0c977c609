import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { encodeMessage } from "../src/jsonrpc.js";
import type { McpServer } from "../src/server.js";

/**
 * An SDK client transport wired to a picomcp server in-process; every message crosses as JSON text,
 * both ways, so the SDK sees exactly what a wire would carry.
 */
export class BridgeTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #server: McpServer;
  readonly #version: string | undefined;
  #conn: ReturnType<McpServer["connect"]> | undefined;

  constructor(server: McpServer, version?: string) {
    this.#server = server;
    this.#version = version;
  }

  async start(): Promise<void> {
    this.#conn = this.#server.connect({ send: (m) => this.#deliver(encodeMessage(m)) });
  }

  #deliver(text: string): void {
    queueMicrotask(() => this.onmessage?.(JSON.parse(text)));
  }

  async send(message: JSONRPCMessage): Promise<void> {
    let m: any = JSON.parse(JSON.stringify(message));
    if (this.#version && m.method === "initialize")
      m = { ...m, params: { ...m.params, protocolVersion: this.#version } };
    void this.#server.handle(m, this.#conn!).then((answer) => {
      if (answer !== undefined) this.#deliver(encodeMessage(answer));
    });
  }

  async close(): Promise<void> {
    this.#conn?.close();
    this.onclose?.();
  }
}

/** An official SDK client connected in-process, asking for `version` at initialize. */
export async function sdkClient(
  server: McpServer,
  options: { version?: string; capabilities?: object } = {},
) {
  const client = new Client(
    { name: "sdk", version: "1.0.0" },
    { capabilities: (options.capabilities ?? {}) as never },
  );
  await client.connect(new BridgeTransport(server, options.version));
  return client;
}

/** Makes an SDK client transport ask for `version` in initialize (the SDK always asks for its latest). */
export function askFor<T extends Transport>(version: string, inner: T): T {
  const send = inner.send.bind(inner);
  inner.send = (message, options) => {
    if ("method" in message && message.method === "initialize" && message.params) {
      message = { ...message, params: { ...message.params, protocolVersion: version } };
    }
    return send(message, options);
  };
  return inner;
}
