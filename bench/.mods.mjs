import { registerHooks } from "node:module";
