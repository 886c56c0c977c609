/**
 * The files under one allowed directory, as resources: `node build/examples/filesystem.js <dir>` (stdio).
 * Every file under it is listed in `resources/list` and read by its `file://` URI; nothing outside it is
 * ever served (not through `..`, not through a symlink, not through a race); a watcher sends
 * `notifications/resources/updated` to subscribers and `list_changed` when files come and go. Clients
 * that only call tools get the same files through `list_resources` and `read_resource`.
 */
import { McpServer } from "picomcp";
import { directoryResources } from "picomcp/fs";
import { serveStdio } from "picomcp/stdio";

const allowed = process.argv[2];
if (allowed === undefined) {
  console.error("usage: node build/examples/filesystem.js <allowed directory>");
  process.exit(2);
}

const server = new McpServer({
  name: "filesystem",
  version: "1.0.0",
  instructions: `The files under ${allowed}, read-only.`,
});

// dotfiles stay out (hidden: false), so do symlinks (followSymlinks: false), and files over 10 MiB
const files = directoryResources(server, allowed, { exclude: /(^|\/)node_modules$/ });
server.resourcesAsTools();

serveStdio(server);
console.error(`filesystem: serving ${files.root} over stdio`);
