import { defaultExtensions, type Extension, McpServer } from "picomcp";

/** The methods clients sent, in order: an audit log beside any other observer (telemetry, say). */
export const audit: string[] = [];
const auditLog: Extension = {
  id: "com.example/audit",
  observer: {
    message: (start) => {
      audit.push(start.method);
      return undefined; // nothing to wrap around the message's handling
    },
  },
};

const leftOut = new Set(["io.modelcontextprotocol/tasks", "io.modelcontextprotocol/skills"]);

export const server = new McpServer({
  name: "small",
  version: "1.0.0",
  extensions: [...defaultExtensions.filter((e) => !leftOut.has(e.id)), auditLog],
});

server.tool("echo", { run: () => "hi" });
