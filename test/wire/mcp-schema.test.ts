/**
 * Every message a server using every primitive sends, over stdio and Streamable HTTP, at each revision from
 * 2024-11-05 to 2026-07-28, validated against that revision's official schema.json, strictly (see
 * test/mcp-schema.ts): a field that leaks into a revision that does not define it fails here.
 */
import { afterAll, describe, expect, it } from "vitest";
import { checker, REVISIONS, type Revision, requestDef, resultDef } from "./mcp-schema.js";
import { httpWire, type Seen, stdioWire, type Wire, waitFor, wireServer } from "./mcp-schema-wire.js";

const MODERN = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const UI = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };
const at = (r: Revision, since: Revision) => REVISIONS.indexOf(r) >= REVISIONS.indexOf(since);

/** What a client of `r` declares. */
function capabilities(r: Revision): object {
  const caps: { [k: string]: object } = { roots: { listChanged: true }, sampling: {} };
  if (at(r, "2025-06-18")) caps.elicitation = {};
  if (at(r, "2025-11-25")) caps.extensions = r === MODERN ? { ...UI, [TASKS]: {} } : UI;
  return caps;
}

const count = (w: Wire, method: string) => w.seen.filter((s) => s.message.method === method).length;

/** Changes every kind a client can be told of, and waits until it was told of each. */
async function changes(w: Wire, server: ReturnType<typeof wireServer>): Promise<void> {
  server.resourceUpdated("docs://readme");
  server.resourceListChanged();
  server.tool("late", { description: "added later", run: () => "late" }).remove();
  server.prompt("late", { description: "added later", get: () => "late" });
  const kinds = ["resources/updated", "resources/list_changed", "tools/list_changed", "prompts/list_changed"];
  await waitFor(() => kinds.every((k) => count(w, `notifications/${k}`) > 0));
}

/** The initialize era: every method, the server's requests, and the notifications of a session. */
async function legacy(w: Wire, r: Revision, server: ReturnType<typeof wireServer>): Promise<void> {
  await w.request("initialize", {
    protocolVersion: r,
    capabilities: capabilities(r),
    clientInfo: { name: "strict", version: "1.0.0" },
  });
  await w.request("ping");
  await w.request("logging/setLevel", { level: "debug" });
  await w.request("tools/list");
  for (const name of ["echo", "structured", "media", "fails", "sample", "roots", "job", "chart"])
    await w.request("tools/call", { name, arguments: name === "echo" ? { text: "hi" } : {} });
  await w.request("tools/call", { name: "chatty", arguments: {}, _meta: { progressToken: "p1" } });
  if (at(r, "2025-06-18")) await w.request("tools/call", { name: "ask", arguments: {} });
  if (r === "2025-11-25") {
    const { result } = await w.request("tools/call", { name: "job", arguments: {}, task: { ttl: 60_000 } });
    await w.request("tasks/result", { taskId: result.task.taskId });
    await w.request("tasks/get", { taskId: result.task.taskId });
    await w.request("tasks/list");
  }
  await w.request("resources/list");
  await w.request("resources/templates/list");
  for (const uri of ["docs://readme", "blob://one", "notes://1?tag=a&tag=b", "ui://wire/chart.html"])
    await w.request("resources/read", { uri });
  await w.request("resources/read", { uri: "skill://review/SKILL.md" });
  await w.request("resources/read", { uri: "missing://x" });
  await w.request("prompts/list");
  await w.request("prompts/get", { name: "greet", arguments: { who: "Ada" } });
  await w.request("completion/complete", {
    ref: { type: "ref/prompt", name: "greet" },
    argument: { name: "who", value: "A" },
  });
  await w.request("completion/complete", {
    ref: { type: "ref/resource", uri: "notes://{id}{?tag*}" },
    argument: { name: "id", value: "" },
  });
  await w.request("skills/list");
  await w.request("no/such/method");
  await w.request("resources/subscribe", { uri: "docs://readme" });
  await changes(w, server);
  await w.request("resources/unsubscribe", { uri: "docs://readme" });
}

/** 2026-07-28: `_meta` on every request, input rounds, a listen, the tasks extension. */
async function modern(w: Wire, server: ReturnType<typeof wireServer>): Promise<void> {
  const meta = (level?: string) => ({
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": capabilities(MODERN),
    "io.modelcontextprotocol/clientInfo": { name: "strict", version: "1.0.0" },
    ...(level ? { "io.modelcontextprotocol/logLevel": level } : {}),
  });
  const ask = (method: string, params: object = {}, level?: string) =>
    w.request(method, { ...params, _meta: { ...meta(level), ...(params as any)._meta } });
  await ask("server/discover");
  await ask("tools/list");
  for (const name of ["echo", "structured", "media", "fails", "chart"])
    await ask("tools/call", { name, arguments: name === "echo" ? { text: "hi" } : {} });
  await ask("tools/call", { name: "chatty", arguments: {}, _meta: { progressToken: "p1" } }, "debug");
  for (const name of ["ask", "sample", "roots"]) {
    const first = await ask("tools/call", { name, arguments: {} });
    const inputResponses: { [k: string]: object } = {};
    for (const [key, req] of Object.entries(first.result.inputRequests as object))
      inputResponses[key] = (await import("./mcp-schema-wire.js")).answer((req as any).method);
    await ask("tools/call", { name, arguments: {}, inputResponses, requestState: first.result.requestState });
  }
  const task = await ask("tools/call", { name: "job", arguments: {} });
  const taskId = task.result.taskId;
  for (let done = false; !done; ) done = (await ask("tasks/get", { taskId })).result.status === "completed";
  await ask("resources/list");
  await ask("resources/templates/list");
  for (const uri of ["docs://readme", "blob://one", "notes://1?tag=a&tag=b", "ui://wire/chart.html"])
    await ask("resources/read", { uri });
  await ask("resources/read", { uri: "missing://x" });
  await ask("prompts/list");
  await ask("prompts/get", { name: "greet", arguments: { who: "Ada" } });
  await ask("completion/complete", {
    ref: { type: "ref/prompt", name: "greet" },
    argument: { name: "who", value: "A" },
  });
  await ask("skills/list");
  await ask("no/such/method");
  await ask("subscriptions/listen", {}); // without notifications: -32602 (docs/eras.md)
  const listen = await w.open(
    "subscriptions/listen",
    {
      _meta: meta(),
      notifications: {
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
        resourceSubscriptions: ["docs://readme"],
      },
    },
    (seen) => seen.some((s) => s.message.method === "notifications/subscriptions/acknowledged"),
  );
  await changes(w, server);
  await listen.close();
}

/** Each message checked against its definition: the envelope, then the result, request or notification. */
function violations(r: Revision, seen: readonly Seen[]): { failures: string[]; checked: Set<string> } {
  const check = checker(r);
  const { defs } = check;
  const envelope = (name: string, fallback: string) => (defs[name] ? name : fallback);
  const failures: string[] = [];
  const checked = new Set<string>();
  const expect = (definition: string, value: unknown, what: string) => {
    checked.add(definition);
    for (const e of check(definition, value)) failures.push(`${what} (${definition}): ${e}`);
  };
  for (const { message, method } of seen) {
    if (message.method !== undefined) {
      const def = requestDef(defs, message.method);
      const wrapper = message.id === undefined ? "JSONRPCNotification" : "JSONRPCRequest";
      expect(wrapper, message, message.method);
      // before 2025-11-25 a request's definition is its method and params; the envelope is JSONRPCRequest
      const { jsonrpc: _, id: __, ...bare } = message;
      if (def) expect(def, defs[def].properties.jsonrpc ? message : bare, message.method);
      // the tasks extension's notification carries a task, and a completed one the call's result
      if (message.method === "notifications/tasks" && message.params.result)
        expect("CallToolResult", message.params.result, "notifications/tasks result");
    } else if (message.error !== undefined) {
      expect(envelope("JSONRPCErrorResponse", "JSONRPCError"), message, `${method} error`);
    } else {
      expect(envelope("JSONRPCResultResponse", "JSONRPCResponse"), message, method!);
      const def = resultDef(defs, method!, message.result);
      if (def) expect(def, message.result, method!);
      if (method === "tasks/get" && r === MODERN && message.result.result)
        expect("CallToolResult", message.result.result, "tasks/get result");
      if (method === "tasks/result") expect("CallToolResult", message.result, "tasks/result");
    }
  }
  return { failures, checked };
}

/** Definitions each revision's run must have checked, so that the scenario cannot shrink unseen. */
const COVERED: { [r in Revision]: readonly string[] } = {
  "2024-11-05": ["InitializeResult", "CallToolResult", "CreateMessageRequest", "ListRootsRequest"],
  "2025-03-26": ["InitializeResult", "CallToolResult", "CompleteResult", "ProgressNotification"],
  "2025-06-18": ["ElicitRequest", "ReadResourceResult", "GetPromptResult", "LoggingMessageNotification"],
  "2025-11-25": ["CreateTaskResult", "GetTaskResult", "JSONRPCErrorResponse"],
  "2026-07-28": ["DiscoverResult", "InputRequiredResult", "SubscriptionsAcknowledgedNotification"],
};
const COMMON = [
  "ListToolsResult",
  "ListResourcesResult",
  "ListResourceTemplatesResult",
  "ReadResourceResult",
  "ListPromptsResult",
  "GetPromptResult",
  "ResourceUpdatedNotification",
  "ResourceListChangedNotification",
  "ToolListChangedNotification",
  "PromptListChangedNotification",
];

const totals: { [k: string]: number } = {};
afterAll(() => console.log("messages checked", totals));

describe("every answer, strictly by its revision's official schema.json", () => {
  for (const r of REVISIONS) {
    for (const transport of ["stdio", "http"] as const) {
      it(`${r} over ${transport}`, async () => {
        const server = wireServer();
        const w = transport === "stdio" ? stdioWire(server) : httpWire(server, r);
        try {
          if (r === MODERN) await modern(w, server);
          else await legacy(w, r, server);
        } finally {
          await w.close();
          server.close();
        }
        const { failures, checked } = violations(r, w.seen);
        expect(failures).toEqual([]);
        for (const def of [...COMMON, ...COVERED[r]]) expect(checked).toContain(def);
        totals[`${r} ${transport}`] = w.seen.length;
      });
    }
  }
});

describe("the strict check itself", () => {
  it("fails a field that leaks into an older revision", () => {
    const old = checker("2024-11-05");
    const content = { uri: "ui://x", text: "<p>", mimeType: "text/html", _meta: { ui: {} } };
    expect(old("ReadResourceResult", { contents: [content] })).not.toEqual([]);
    expect(checker("2025-06-18")("ReadResourceResult", { contents: [content] })).toEqual([]);
    expect(old("Tool", { name: "t", title: "T", inputSchema: { type: "object" } })).not.toEqual([]);
    expect(
      checker("2025-03-26")("InitializeResult", {
        protocolVersion: "2025-03-26",
        capabilities: {},
        serverInfo: { name: "s", version: "1", title: "S" },
      }),
    ).not.toEqual([]);
    expect(old("EmptyResult", { resultType: "complete" })).not.toEqual([]);
  });

  it("keeps open what the revision keeps open: _meta, JSON Schema objects", () => {
    const c = checker("2025-06-18");
    expect(
      c("Tool", {
        name: "t",
        inputSchema: { type: "object", $schema: "https://json-schema.org/draft/2020-12/schema" },
        _meta: { "com.example/x": { y: 1 } },
      }),
    ).toEqual([]);
  });
});
