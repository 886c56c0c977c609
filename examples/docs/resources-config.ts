import { McpServer } from "picomcp";

export const server = new McpServer({ name: "app", version: "1.0.0" });

const loadConfig = () => ({ theme: "dark", language: "en" });

server.resource("config://app", {
  description: "The app configuration",
  read: () => loadConfig(),
});
