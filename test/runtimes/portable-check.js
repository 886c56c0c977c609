// Runs the checks in-process, on whatever runtime runs this file (Node, Deno, Bun). Prints "portable: ok".
import { createHttpHandler } from "../../dist/http/index.js";
import { runChecks } from "./checks.js";
import { server } from "./server.js";

const handle = createHttpHandler(server);
await runChecks(handle);
handle.close();
console.log("portable: ok");
