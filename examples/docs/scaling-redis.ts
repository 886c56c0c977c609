import { McpServer } from "picomcp";
import { serve } from "picomcp/node";
import { RedisBus, RedisEventStore } from "picomcp/redis";
import { createClient } from "redis";

// the request-state key: a secret made once (`openssl rand -base64 32`), the same in every replica
const stateKey = process.env.MCP_STATE_KEY;
if (!stateKey) throw new Error("MCP_STATE_KEY is not set (make one: openssl rand -base64 32)");
const redis = createClient({ url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
// publishes on `redis`, subscribes on a duplicate of it; connects both
const bus = new RedisBus(redis);

export const server = new McpServer({
  name: "notes",
  version: "1.0.0",
  bus,
  // every replica seals and opens 2026-07-28 request states with the same keys
  requestState: { keys: [stateKey] },
});

const notes = new Map<string, string>([["welcome", "Hello"]]);

server.resource("notes://{id}", {
  description: "A note",
  read: ({ id }) => notes.get(id) ?? "",
});

server.tool("edit_note", {
  description: "Replaces a note's text",
  input: {
    type: "object",
    properties: { id: { type: "string" }, text: { type: "string" } },
    required: ["id", "text"],
  },
  run: ({ id, text }) => {
    notes.set(id, text);
    // heard by every subscriber of notes://<id>, whichever replica it is connected to
    server.resourceUpdated(`notes://${id}`);
    return "saved";
  },
});

await bus.ready; // start once Redis is there (without it: local delivery until it is)
await serve(server, { port: 3000, eventStore: new RedisEventStore(redis) });
