// A Cloudflare Worker serving the runtime-check server (run by workerd in test/runtimes.test.ts).
import { createHttpHandler } from "../../dist/http/index.js";
import { server } from "./server.js";

const handle = createHttpHandler(server);
export default { fetch: (request) => handle(request) };
