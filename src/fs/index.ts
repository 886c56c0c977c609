/** picomcp/fs: the files under one directory as resources, and never a byte from outside it. Node only. */
import type { McpServer } from "../server.js";
import { createDirectoryResources, type DirectoryOptions, type DirectoryResources } from "./directory.js";

export type { DirectoryOptions, DirectoryResources, PathFilter } from "./directory.js";
export { MAX_NAME_BYTES, MAX_PATH_BYTES, MIME_TYPES } from "./names.js";

/**
 * Serves the files under `root` as resources: each file listed in `resources/list` (paginated like any
 * list) and readable by its URI through the template `<prefix>{+path}`, its MIME type from its name, sent
 * as text when it is valid UTF-8 without a NUL and as a base64 blob otherwise; with `watch`, an edit
 * sends `notifications/resources/updated` to its subscribers (both eras) and a file that comes or goes
 * `list_changed`. No byte from outside the root is served: each file is opened first, then where the
 * opened file really is gets checked (docs/files.md says how, and its limits per platform).
 * Throws at once when `root` is not a directory, or is the root of a file system.
 * @example
 * const files = directoryResources(server, "/srv/docs", { exclude: /(^|\/)drafts$/ });
 * files.uriOf("guide.md"); // "file:///srv/docs/guide.md"
 */
export function directoryResources(
  server: McpServer,
  root: string,
  options: DirectoryOptions = {},
): DirectoryResources {
  return createDirectoryResources(server, root, options);
}
