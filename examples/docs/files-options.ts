import { McpServer } from "picomcp";
import { directoryResources } from "picomcp/fs";

export const server = new McpServer({ name: "notes", version: "1.0.0" });

export const notes = directoryResources(server, "./notes", {
  prefix: "notes://", // notes://2026/todo.md instead of file:///home/me/notes/2026/todo.md
  include: /\.(md|org|txt)$/, // only these files...
  exclude: /(^|\/)(archive|node_modules)$/, // ...and never what is under these folders
  hidden: false, // dotfiles and dot-folders stay out (the default)
  followSymlinks: true, // a symlink that stays under ./notes is served; one that leads out never is
  maxBytes: 1024 * 1024, // a bigger file is refused with -32602
  maxListed: 5_000, // resources/list names at most this many; the template reads the rest
  mimeTypes: { org: "text/x-org" }, // over the built-in table
  debounce: 100, // a burst of writes within 100 ms is one notification
});

notes.uriOf("2026/todo.md"); // "notes://2026/todo.md"
