import { spawn } from "node:child_process";
import { rssMiB, StdioPeer } from "./clients.js";

const flags = process.argv.slice(3);
const child = spawn(process.execPath, [...flags, `bench/servers/${process.argv[2]}.js`, "stdio"], {
  stdio: ["pipe", "pipe", "inherit"],
});
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
const r0 = rssMiB(child.pid);
const echo = (id) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello ${id}"}}}`;
const l = await peer.load(echo, { ms: 1000 });
console.log(
  process.argv[2],
  flags.join(" "),
  "start",
  r0.toFixed(1),
  "after",
  rssMiB(child.pid).toFixed(1),
  Math.round(l.rps),
);
await peer.stop();
