// The four tools of the TM Dev Lab MCP server benchmark (v1), written here from its description: a CPU
// tool (recursive Fibonacci), an I/O tool (an HTTP GET to a mock API), a JSON transform (every string
// upper-cased) and a query simulated by a timer. Each answers one text content holding a JSON object, as
// their servers do; both contenders (tmdevlab-picomcp.js, tmdevlab-sdk1.js) run these same functions.
import { z } from "zod";

export const SERVER_TYPE = "nodejs";

/** The tools: name, description, zod shape of the input, and `run(args)` → the JSON text to answer. */
export const TOOLS = [
  {
    name: "calculate_fibonacci",
    description: "The n-th Fibonacci number, computed recursively (CPU-bound)",
    shape: { n: z.number().describe("An integer from 0 to 40") },
    run: ({ n }) => {
      if (!(n >= 0 && n <= 40)) throw new Error("n must be between 0 and 40");
      return JSON.stringify({ input: n, result: fibonacci(n), server_type: SERVER_TYPE });
    },
  },
  {
    name: "fetch_external_data",
    description: "An HTTP GET of an external endpoint (I/O-bound)",
    shape: { endpoint: z.string().describe("The URL to GET") },
    run: async ({ endpoint }) => {
      const started = Date.now();
      try {
        const response = await fetch(endpoint);
        await response.arrayBuffer();
        const ms = Date.now() - started;
        return JSON.stringify({
          url: endpoint,
          status_code: response.status,
          response_time_ms: ms,
          server_type: SERVER_TYPE,
        });
      } catch (error) {
        const ms = Date.now() - started;
        return JSON.stringify({
          url: endpoint,
          status_code: 0,
          response_time_ms: ms,
          error: String(error?.message ?? error),
          server_type: SERVER_TYPE,
        });
      }
    },
  },
  {
    name: "process_json_data",
    description: "Upper-cases every string of a JSON object",
    shape: { data: z.object({}).passthrough().describe("The object to transform") },
    run: ({ data }) =>
      JSON.stringify({
        original_keys: Object.keys(data),
        transformed_data: upper(data),
        server_type: SERVER_TYPE,
      }),
  },
  {
    name: "simulate_database_query",
    description: "A database query simulated by a delay",
    shape: {
      query: z.string().describe("The SQL text"),
      delay_ms: z.number().default(0).describe("Delay in ms, 0 to 5000"),
    },
    run: async ({ query, delay_ms = 0 }) => {
      if (!(delay_ms >= 0 && delay_ms <= 5000)) throw new Error("delay_ms must be between 0 and 5000");
      await new Promise((resolve) => setTimeout(resolve, delay_ms));
      return JSON.stringify({
        query,
        delay_ms,
        timestamp: new Date().toISOString(),
        server_type: SERVER_TYPE,
      });
    },
  },
];

function fibonacci(n) {
  return n <= 1 ? n : fibonacci(n - 1) + fibonacci(n - 2);
}

function upper(value) {
  if (typeof value === "string") return value.toUpperCase();
  if (Array.isArray(value)) return value.map(upper);
  if (typeof value !== "object" || value === null) return value;
  const out = {};
  for (const key of Object.keys(value)) out[key] = upper(value[key]);
  return out;
}
