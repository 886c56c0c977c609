import { spawn } from "node:child_process";
import { StdioPeer } from "./clients.js";

const child = spawn(
  process.execPath,
  [
    "--heap-prof",
    "--heap-prof-dir=/tmp/hprof",
    "--heap-prof-interval=4096",
    `bench/servers/${process.argv[2]}.js`,
    "stdio",
  ],
  { stdio: ["pipe", "pipe", "inherit"] },
);
const peer = new StdioPeer(child);
await peer.call(
  JSON.stringify({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "b", version: "1" } },
  }),
  0,
);
const echo = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}"}}}`;
console.log(await peer.load(echo, { ms: 2000 }));
await peer.stop();
