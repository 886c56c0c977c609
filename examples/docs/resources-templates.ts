import { McpServer, safeJoin } from "picomcp";

export const server = new McpServer({ name: "files", version: "1.0.0" });

const root = "/srv/files";
const files = new Map([
  [`${root}/src/index.ts`, "export {};"],
  [`${root}/docs/guide.md`, "# Guide"],
]);
const paths = [...files.keys()].map((p) => p.slice(root.length + 1));

// {name}: one segment; users://42 matches, users://42/posts does not
server.resource("users://{id}", { read: ({ id }) => `user ${id}` });

// {+path}: anything, "/" included; values are decoded once, and ".." that escapes never gets here
server.resource("files://{+path}", {
  list: () => paths.map((path) => ({ uri: `files://${path}`, name: path })),
  complete: { path: (value) => paths.filter((p) => p.startsWith(value)) },
  read: ({ path }) => files.get(safeJoin(root, path)) ?? `no such file: ${path}`,
});

// {?q,lang}: optional query variables, in any order; unknown keys are ignored
server.resource("search://books{?q,lang}", {
  read: ({ q, lang }) => ({ q: q ?? null, lang: lang ?? "en" }),
  //      ^? { q?: string; lang?: string }
});

// {/segments*}: an exploded path, as an array
server.resource("tree://root{/segments*}", {
  read: ({ segments }) => segments.join(" > "),
  //      ^? { segments: string[] }
});
