/**
 * What a server offers, asked of the server itself: `picomcp bundle` starts it over stdio like a client,
 * initializes, lists its tools and prompts (every page), and gets each prompt's text with placeholders.
 */
import { spawn } from "node:child_process";
import { LATEST_SESSION_VERSION } from "../eras/versions.js";

/** A tool as a bundle's manifest lists it. */
export interface ToolSummary {
  name: string;
  description?: string;
}

/** A prompt as a bundle's manifest lists it: its text carries `${arguments.<name>}` for each argument. */
export interface PromptSummary {
  name: string;
  description?: string;
  arguments?: string[];
  text: string;
}

/** What {@link probe} learned. */
export interface Offer {
  serverInfo: { name?: string; version?: string; title?: string };
  instructions?: string;
  tools: ToolSummary[];
  prompts: PromptSummary[];
}

type Rpc = { result?: Record<string, unknown>; error?: { code: number; message: string } };

/** Starts `command args` with `env` (in `cwd`), asks what it offers, and stops it; throws with its stderr when it fails. */
export async function probe(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
  timeoutMs = 20_000,
): Promise<Offer> {
  const child = spawn(command, args, {
    stdio: ["pipe", "pipe", "pipe"],
    env,
    ...(cwd === undefined ? {} : { cwd }),
  });
  const waiting = new Map<number, (message: Rpc) => void>();
  let stderr = "";
  let failed: ((error: Error) => void) | undefined;
  const failure = new Promise<never>((_, reject) => {
    failed = reject;
  });
  failure.catch(() => {});
  const fail = (why: string) =>
    failed?.(
      new Error(
        `${why}${stderr.trim() === "" ? "" : `; it wrote:\n${stderr.trim().split("\n").slice(-20).join("\n")}`}`,
      ),
    );
  const timer = setTimeout(() => fail(`the server did not answer within ${timeoutMs / 1000} s`), timeoutMs);
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-8192); // the last lines are what a failure shows
  });
  child.on("error", (error) => fail(`cannot start the server: ${error.message}`));
  child.on("close", (code) => fail(`the server exited (code ${code}) before it answered`));
  child.stdin.on("error", () => {});
  let buffer = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (line === "") continue;
      try {
        const message = JSON.parse(line);
        if (typeof message?.id === "number" && ("result" in message || "error" in message)) {
          waiting.get(message.id)?.(message);
          waiting.delete(message.id);
        }
      } catch {} // a line of logging on stdout: not ours to judge here
    }
  });
  let nextId = 1;
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const request = (method: string, params: object): Promise<Rpc> => {
    const id = nextId++;
    const answer = new Promise<Rpc>((resolve) => waiting.set(id, resolve));
    send({ jsonrpc: "2.0", id, method, params });
    return Promise.race([answer, failure]);
  };
  const must = async (method: string, params: object) => {
    const answer = await request(method, params);
    if (answer.error) throw new Error(`${method} failed: ${answer.error.message}`);
    return answer.result ?? {};
  };
  const all = async (method: string, key: string) => {
    const items: Record<string, unknown>[] = [];
    let cursor: unknown;
    do {
      const page = await must(method, cursor === undefined ? {} : { cursor });
      items.push(...((page[key] as Record<string, unknown>[] | undefined) ?? []));
      cursor = page.nextCursor;
    } while (typeof cursor === "string");
    return items;
  };

  try {
    const init = await must("initialize", {
      protocolVersion: LATEST_SESSION_VERSION,
      capabilities: {},
      clientInfo: { name: "picomcp-bundle", version: "1" },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const capabilities = (init.capabilities ?? {}) as Record<string, unknown>;
    const tools = capabilities.tools ? await all("tools/list", "tools") : [];
    const prompts = capabilities.prompts ? await all("prompts/list", "prompts") : [];
    const summaries: PromptSummary[] = [];
    for (const prompt of prompts) summaries.push(await promptText(prompt, request));
    return {
      serverInfo: (init.serverInfo ?? {}) as Offer["serverInfo"],
      ...(typeof init.instructions === "string" ? { instructions: init.instructions } : {}),
      tools: tools.map((t) => ({
        name: String(t.name),
        ...(typeof t.description === "string" ? { description: t.description } : {}),
      })),
      prompts: summaries,
    };
  } finally {
    clearTimeout(timer);
    failed = undefined;
    child.stdin.end();
    child.kill();
  }
}

/**
 * A prompt's summary: its text is the prompt got with `${arguments.<name>}` for each argument (what the
 * manifest's template syntax says), or, when that get fails or is not all text, its description.
 */
async function promptText(
  prompt: Record<string, unknown>,
  request: (method: string, params: object) => Promise<Rpc>,
): Promise<PromptSummary> {
  const name = String(prompt.name);
  const description = typeof prompt.description === "string" ? prompt.description : undefined;
  const args = Array.isArray(prompt.arguments)
    ? prompt.arguments.map((a: { name?: unknown }) => String(a?.name))
    : [];
  const placeholders = Object.fromEntries(args.map((a) => [a, `\${arguments.${a}}`]));
  const answer = await request("prompts/get", { name, arguments: placeholders });
  const messages = (answer.result?.messages ?? []) as { content?: { type?: string; text?: string } }[];
  const texts = messages.map((m) => (m.content?.type === "text" ? m.content.text : undefined));
  const text =
    answer.error === undefined && texts.length > 0 && texts.every((t) => typeof t === "string")
      ? texts.join("\n\n")
      : (description ?? name);
  return {
    name,
    ...(description === undefined ? {} : { description }),
    ...(args.length > 0 ? { arguments: args } : {}),
    text,
  };
}
