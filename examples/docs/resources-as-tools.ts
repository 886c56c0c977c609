import { McpServer } from "picomcp";

export const server = new McpServer({ name: "notes", version: "1.0.0" });

server.resource("notes://today", { read: () => "Buy milk" });
server.resource("notes://{date}", {
  description: "The notes of one day",
  read: ({ date }) => `Notes of ${date}`,
});

// list_resources and read_resource, for clients that never read resources themselves
server.resourcesAsTools();
