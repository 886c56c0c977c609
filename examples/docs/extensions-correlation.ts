import { extendContext, type LoggingLevel, McpServer, requestSlot } from "picomcp";

export const server = new McpServer({ name: "shop", version: "1.0.0" });

/** This request's correlation id: set by the wrapper, read by the tool it wraps. */
const correlation = requestSlot<string>("com.example/correlation");
let issued = 0;

server.tool("checkout", {
  description: "Places the order in the cart",
  run: (_args, ctx) => {
    ctx.log("info", "charging the card");
    return `Order placed (${ctx.get(correlation)})`;
  },
});

server.use({
  id: "com.example/correlation",
  requires: ["picomcp/tools"],
  wrap: {
    "tools/call": async (params, ctx, next) => {
      const id = `order-${++issued}`;
      ctx.set(correlation, id);
      // the tool runs with a context whose log messages carry the id
      const tagged = extendContext(ctx, {
        log: (level: LoggingLevel, data: unknown) => ctx.log(level, { id, data }, String(params.name)),
      });
      const result = (await next(tagged)) as { _meta?: object };
      // what next() gives may be frozen: return a new object
      return { ...result, _meta: { ...result._meta, "com.example/correlation": id } };
    },
  },
});
