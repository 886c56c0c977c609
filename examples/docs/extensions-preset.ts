import {
  defaultExtensions,
  type Extension,
  McpServer,
  type MessageObservation,
  type MessageStart,
  type Observer,
} from "picomcp";

/** The methods clients sent, in order: an audit log beside any other observer (telemetry, say). */
export const audit: string[] = [];

/** An observer typed on its own (kept in a module of its own, say), then brought by an extension. */
const auditObserver: Observer = {
  message: (start: MessageStart): MessageObservation | undefined => {
    audit.push(start.method);
    return undefined; // nothing to wrap around the message's handling
  },
};
const auditLog: Extension = { id: "com.example/audit", observer: auditObserver };

const leftOut = new Set(["io.modelcontextprotocol/tasks", "io.modelcontextprotocol/skills"]);

export const server = new McpServer({
  name: "small",
  version: "1.0.0",
  extensions: [...defaultExtensions.filter((e) => !leftOut.has(e.id)), auditLog],
});

server.tool("echo", { run: () => "hi" });
