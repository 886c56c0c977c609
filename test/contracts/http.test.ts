import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { transportContract } from "./transport.js";

const fixture = fileURLToPath(new URL("../fixtures/contract-http.js", import.meta.url));
transportContract("Streamable HTTP", async () => {
  const child = spawn(process.execPath, [fixture], { stdio: ["ignore", "pipe", "inherit"] });
  const [url] = await once(child.stdout, "data");
  return {
    transport: new StreamableHTTPClientTransport(new URL(String(url).trim())),
    close: () => void child.kill(),
  };
});
