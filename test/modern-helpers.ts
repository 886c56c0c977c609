import type { AuthInfo, Connection } from "../src/connection.js";
import { encodeMessage } from "../src/jsonrpc.js";
import type { McpServer } from "../src/server.js";
import type { JsonRpcMessage } from "../src/types.js";

export const V = "2026-07-28";
export const SERVER_META = { "io.modelcontextprotocol/serverInfo": { name: "t", version: "1.0.0" } };

/** The `_meta` of a 2026-07-28 request. */
export function meta(capabilities: object = {}, extra: object = {}) {
  return {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
    ...extra,
  };
}

const wire = (m: unknown) => JSON.parse(encodeMessage(m as JsonRpcMessage));

/**
 * A raw 2026-07-28 peer: every request carries `_meta`; `stream` records what went to the request's
 * own `send`, `sent` what went to the connection's.
 */
export function modernPeer(server: McpServer, auth?: AuthInfo) {
  const sent: any[] = [];
  const connection: Connection = server.connect({
    send: (m) => void sent.push(wire(m)),
    ...(auth ? { auth } : {}),
  });
  let next = 1;
  const raw = async (message: unknown, options: { signal?: AbortSignal; stateless?: boolean } = {}) => {
    const stream: any[] = [];
    const answer = await server.handle(message, connection, {
      ...options,
      send: (m) => void stream.push(wire(m)),
    });
    return { answer: answer === undefined ? undefined : wire(answer), stream };
  };
  /** One request; `params._meta` defaults to {@link meta} with `capabilities`. */
  const request = async (
    method: string,
    params: object = {},
    capabilities: object = {},
    extraMeta: object = {},
  ) => {
    const id = next++;
    return raw({ jsonrpc: "2.0", id, method, params: { _meta: meta(capabilities, extraMeta), ...params } });
  };
  return { connection, sent, raw, request };
}
