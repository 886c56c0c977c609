/**
 * Revisions are data. No file of src/ compares revision strings, and a new revision is the table
 * and the one shaper: a copy of src/ with a fake revision 2099-01-01 (one row, one flag, one change
 * in serialize.ts, and nothing else) compiles and serves it next to every other revision.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(join(dirname(fileURLToPath(import.meta.url)), ".."), "..");
const src = join(root, "src");

function sources(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[])
    .map((f) => f.split("\\").join("/"))
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
}

/** Code without comments, so that a date in a doc comment does not count. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");

describe("revisions are data", () => {
  it("never compares revisions as strings, and names them only in the table", () => {
    const comparisons: string[] = [];
    const literals: string[] = [];
    for (const file of sources(src)) {
      const text = code(readFileSync(join(src, file), "utf8"));
      for (const line of text.split("\n")) {
        if (/(>=|<=|<|>|===|!==)\s*"20\d\d-\d\d-\d\d"|"20\d\d-\d\d-\d\d"\s*(>=|<=|<|>|===|!==)/.test(line))
          comparisons.push(`${file}: ${line.trim()}`);
        if (/\bversion\s*(>=|<=|<|>)\s*\w/.test(line)) comparisons.push(`${file}: ${line.trim()}`);
        // another API's own version header (GitHub's REST API) is not an MCP revision
        if (/x-github-api-version/.test(line)) continue;
        if (file !== "eras/versions.ts" && /"20\d\d-\d\d-\d\d"/.test(line))
          literals.push(`${file}: ${line.trim()}`);
      }
    }
    expect(comparisons).toEqual([]);
    expect(literals).toEqual([]);
  });
});

/** The whole change a new revision needs: the table (a flag, its default, a row) and the shaper. */
const PATCH: { file: string; from: string; to: string }[] = [
  {
    file: "eras/versions.ts",
    from: '  /** The code for "resource not found". */\n  readonly resourceNotFoundCode: number;\n}',
    to: '  /** The code for "resource not found". */\n  readonly resourceNotFoundCode: number;\n  /** A tool result with structured content carries no text copy of it. */\n  readonly structuredOnly: boolean;\n}',
  },
  {
    file: "eras/versions.ts",
    from: "  resourceNotFoundCode: -32002,\n};",
    to: "  resourceNotFoundCode: -32002,\n  structuredOnly: false,\n};",
  },
  {
    file: "eras/versions.ts",
    from: "] as const satisfies",
    to: '  ["2099-01-01", { structuredOnly: true }],\n] as const satisfies',
  },
  {
    file: "eras/serialize.ts",
    from: "  if (content === result.content && !dropStructured) return result;",
    to: "  if (f.structuredOnly && sc !== undefined) {\n    const { content: _, ...rest } = result;\n    return rest as CallToolResult;\n  }\n  if (content === result.content && !dropStructured) return result;",
  },
];

describe("a new revision: the table and the one shaper, nothing else", () => {
  let dir: string;
  let lib: any;
  let http: any;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "picomcp-revision-"));
    cpSync(src, join(dir, "src"), { recursive: true, filter: (f) => !f.endsWith(".test.ts") });
    for (const { file, from, to } of PATCH) {
      const path = join(dir, "src", file);
      const text = readFileSync(path, "utf8");
      expect(text.includes(from), `${file} still holds ${JSON.stringify(from)}`).toBe(true);
      writeFileSync(path, text.replace(from, to));
    }
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        extends: join(root, "tsconfig.build.json"),
        compilerOptions: {
          rootDir: "src",
          outDir: "dist",
          // tsconfig.build.json writes declarations only (the published JavaScript is bundled); this copy is
          // compiled module by module
          declaration: false,
          emitDeclarationOnly: false,
          typeRoots: [join(root, "node_modules/@types")],
        },
        include: ["src"],
        exclude: [
          "src/dev",
          "src/stdio.ts",
          "src/http/node*.ts",
          "src/auth",
          "src/redis",
          "src/otel",
          "src/proxy",
        ],
      }),
    );
    try {
      execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", dir], {
        stdio: "pipe",
      });
    } catch (error) {
      throw new Error(`the patched copy does not compile:\n${(error as { stdout?: Buffer }).stdout}`);
    }
  }, 120_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const files = new Set(PATCH.map((p) => p.file));
  it("touches two files: the table and the shaper", () => {
    expect([...files].sort()).toEqual(["eras/serialize.ts", "eras/versions.ts"]);
  });

  const call = (version: string, id: number) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: {
      name: "stats",
      _meta: {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  });

  it("serves 2099-01-01 statelessly with its changed field, and 2026-07-28 as before", async () => {
    lib = await import(pathToFileURL(join(dir, "dist/index.js")).href);
    http = await import(pathToFileURL(join(dir, "dist/http/index.js")).href);
    expect(lib.SUPPORTED_VERSIONS[0]).toBe("2099-01-01");
    expect(lib.STATELESS_VERSIONS).toEqual(["2099-01-01", "2026-07-28"]);
    const server = new lib.McpServer({ name: "t", version: "1.0.0" });
    server.tool("stats", {
      output: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
      run: () => ({ n: 1 }),
    });
    const conn = server.connect({ send: () => {} });
    const next = await server.handle(call("2099-01-01", 1), conn);
    expect(next.result).toEqual({
      structuredContent: { n: 1 },
      resultType: "complete",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "t", version: "1.0.0" } },
    });
    const now = await server.handle(call("2026-07-28", 2), conn);
    expect(now.result.content).toEqual([{ type: "text", text: '{"n":1}' }]);
    // a session revision cannot be asked for statelessly, and initialize does not offer the new one
    const handler = http.createHttpHandler(server);
    const res = await handler(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: {
          host: "127.0.0.1",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2099-01-01",
          "mcp-method": "tools/call",
          "mcp-name": "stats",
        },
        body: JSON.stringify(call("2099-01-01", 3)),
      }),
    );
    expect(res.status).toBe(200);
    expect((await res.json()).result.structuredContent).toEqual({ n: 1 });
    const init = await server.handle(
      {
        jsonrpc: "2.0",
        id: 4,
        method: "initialize",
        params: { protocolVersion: "2099-01-01", capabilities: {} },
      },
      server.connect({ send: () => {} }),
    );
    expect(init.result.protocolVersion).toBe("2025-11-25");
  });
});
