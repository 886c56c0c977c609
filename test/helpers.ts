import type { Connection } from "../src/connection.js";
import { encodeMessage } from "../src/jsonrpc.js";
import type { McpServer } from "../src/server.js";
import type { JsonRpcMessage } from "../src/types.js";

/** A raw JSON-RPC peer: sends objects or text, returns the exact wire answer, records what the server sent. */
export function rawPeer(server: McpServer) {
  const sent: any[] = [];
  const connection: Connection = server.connect({
    send: (m: JsonRpcMessage) => void sent.push(JSON.parse(encodeMessage(m))),
  });
  const send = async (message: unknown) => {
    const answer = await server.handle(
      typeof message === "string" ? JSON.parse(message) : message,
      connection,
    );
    return answer === undefined ? undefined : JSON.parse(encodeMessage(answer));
  };
  const initialize = async (protocolVersion = "2025-11-25", capabilities: object = {}) => {
    const answer = await send({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion, capabilities, clientInfo: { name: "raw", version: "1" } },
    });
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return answer;
  };
  return { connection, sent, send, initialize };
}

/** Resolves after pending microtasks and one macrotask. */
export const tick = () => new Promise((r) => setTimeout(r, 0));
