import { fileURLToPath } from "node:url";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { transportContract } from "./transport.js";

const fixture = fileURLToPath(new URL("../fixtures/contract-stdio.js", import.meta.url));
transportContract("stdio", async () => ({
  transport: new StdioClientTransport({ command: process.execPath, args: [fixture], stderr: "pipe" }),
  close: () => {},
}));
