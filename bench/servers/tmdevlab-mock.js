// The mock API that `fetch_external_data` calls in the TM Dev Lab workload (theirs is a MockServer
// container): GET /api answers a small JSON object at once. Listens on 127.0.0.1; prints `PORT <n>`.
import { createServer } from "node:http";
import { announce } from "./fixture.js";

const body = JSON.stringify({ status: "ok", data: { id: 1, name: "benchmark", values: [1, 2, 3] } });
announce(
  createServer((req, res) => {
    req.resume();
    res.writeHead(req.url === "/api" ? 200 : 404, { "content-type": "application/json" }).end(body);
  }),
);
