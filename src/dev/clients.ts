/**
 * `picomcp install`'s knowledge of each client: where its configuration file is on each platform, under
 * which key it keeps its servers, and the entry it documents for a stdio server and for a remote URL.
 * Pure: paths are computed from a platform, a home and an environment given to it, never read here.
 */
import { posix, win32 } from "node:path";

/** The clients `picomcp install` writes for. */
export const CLIENTS = ["claude-desktop", "claude-code", "cursor", "vscode", "mcp-json"] as const;
export type Client = (typeof CLIENTS)[number];

/** Where a path is computed for: `process.platform`, the home folder and the environment. */
export interface Place {
  platform: NodeJS.Platform;
  home: string;
  env: { readonly [name: string]: string | undefined };
  /** The current folder: where `mcp-json` writes `mcp.json` when no `--file` is given. */
  cwd: string;
}

/** A server started by the client: an absolute command, its arguments and environment. */
export interface StdioServer {
  command: string;
  args: readonly string[];
  env: { readonly [name: string]: string };
}

/** A server the client reaches at a URL (Streamable HTTP). */
export interface RemoteServer {
  url: string;
  /** HTTP headers the client sends with each request (an API key). */
  headers?: { readonly [name: string]: string };
}

export type ServerSpec = StdioServer | RemoteServer;

const isRemote = (spec: ServerSpec): spec is RemoteServer => "url" in spec;

/** The path module of a platform: Windows paths are computed with backslashes on any host. */
const pathsOf = (platform: NodeJS.Platform) => (platform === "win32" ? win32 : posix);

/** `%APPDATA%` on Windows (its default under the home when unset). */
function appData(place: Place): string {
  return place.env.APPDATA || win32.join(place.home, "AppData", "Roaming");
}

/** `$XDG_CONFIG_HOME` on Linux and the other Unixes (default `~/.config`). */
function xdgConfig(place: Place): string {
  const xdg = place.env.XDG_CONFIG_HOME;
  return xdg && posix.isAbsolute(xdg) ? xdg : posix.join(place.home, ".config");
}

/**
 * The folder of a desktop application's settings: `~/Library/Application Support/<app>` on macOS,
 * `%APPDATA%\<app>` on Windows, `$XDG_CONFIG_HOME/<app>` elsewhere.
 */
function appFolder(place: Place, app: string): string {
  if (place.platform === "darwin") return posix.join(place.home, "Library", "Application Support", app);
  if (place.platform === "win32") return win32.join(appData(place), app);
  return posix.join(xdgConfig(place), app);
}

/** The configuration file `client` reads its servers from, on `place`'s platform. */
export function configPath(client: Client, place: Place): string {
  const path = pathsOf(place.platform);
  switch (client) {
    case "claude-desktop":
      // macOS and Windows are the documented ones; Linux builds of the app use the XDG folder
      return path.join(appFolder(place, "Claude"), "claude_desktop_config.json");
    case "claude-code":
      // the user scope: servers under the top-level "mcpServers" of ~/.claude.json, in every project
      return path.join(place.home, ".claude.json");
    case "cursor":
      return path.join(place.home, ".cursor", "mcp.json");
    case "vscode":
      // the user profile's mcp.json (the command "MCP: Open User Configuration" opens it)
      return path.join(appFolder(place, "Code"), "User", "mcp.json");
    case "mcp-json":
      return path.join(place.cwd, "mcp.json");
  }
}

/** The key of the object that holds the servers, by name, in `client`'s file. */
export function serversKey(client: Client): "mcpServers" | "servers" {
  return client === "vscode" ? "servers" : "mcpServers";
}

/** Why `client` cannot take `spec`, or undefined when it can. */
export function unsupported(client: Client, spec: ServerSpec): string | undefined {
  if (client === "claude-desktop" && isRemote(spec))
    return "Claude Desktop's configuration file holds only servers it starts itself (a command); it adds a remote server under Settings → Connectors, by its URL. Install the server's stdio entry instead, or add the URL there";
  return undefined;
}

/** The JSON entry `client` documents for `spec`. */
export function entryFor(client: Client, spec: ServerSpec): Record<string, unknown> {
  if (isRemote(spec)) {
    // Claude Code and VS Code name the transport; Cursor and a plain mcp.json take the URL alone
    const entry: Record<string, unknown> =
      client === "claude-code" || client === "vscode" ? { type: "http", url: spec.url } : { url: spec.url };
    if (spec.headers && Object.keys(spec.headers).length > 0) entry.headers = { ...spec.headers };
    return entry;
  }
  const entry: Record<string, unknown> = {};
  if (client === "claude-code" || client === "vscode") entry.type = "stdio";
  entry.command = spec.command;
  entry.args = [...spec.args];
  if (Object.keys(spec.env).length > 0) entry.env = { ...spec.env };
  return entry;
}
