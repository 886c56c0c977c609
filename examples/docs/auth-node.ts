import { createServer } from "node:http";
import { toNodeListener } from "picomcp/node";
import { handle } from "./auth-jwt.js";

// every path goes to the handler: it serves the metadata at /.well-known/… and MCP at the rest
createServer(toNodeListener(handle)).listen(3000, "127.0.0.1");
