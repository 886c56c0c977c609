import { McpServer } from "picomcp";
import { directoryResources } from "picomcp/fs";
import { serveStdio } from "picomcp/stdio";

const server = new McpServer({ name: "docs", version: "1.0.0" });

// every file under /srv/docs: listed, read by file:///srv/docs/…, and watched
const files = directoryResources(server, "/srv/docs");

serveStdio(server);
console.error(`serving ${files.root}: ${files.template}`);
