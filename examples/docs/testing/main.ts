import { serveStdio } from "picomcp/stdio";
import { server } from "./server.js";

serveStdio(server);
