import { McpServer } from "picomcp";

// every replica behind one endpoint must seal and open request states with the same keys: a secret
// made once (`openssl rand -base64 32`) and given to every replica, never written in the code
const stateKey = process.env.MCP_STATE_KEY;
if (!stateKey) throw new Error("MCP_STATE_KEY is not set (make one: openssl rand -base64 32)");

export const server = new McpServer({
  name: "bookings",
  version: "1.0.0",
  cache: { ttlMs: 60_000 }, // lists and reads stay fresh for a minute, per caller
  requestState: { keys: [stateKey] },
});

server.resource("bookings://opening-hours", {
  cache: { ttlMs: 86_400_000, scope: "public" }, // the same for everyone: shared caches may keep it a day
  read: () => "Tue-Sun 12:00-23:00",
});

let holds = 0;

server.tool("book_table", {
  description: "Holds a table, asks for the party size, then books it",
  run: async (_args, ctx) => {
    // on 2026-07-28 this runs again from the top when the client answers: keep the hold in the state
    let hold = ctx.requestState as { id: number } | undefined;
    if (hold === undefined) {
      hold = { id: ++holds };
      ctx.setRequestState(hold);
    }
    const answer = await ctx.elicit(
      {
        message: "How many guests?",
        requestedSchema: { type: "object", properties: { guests: { type: "number" } }, required: ["guests"] },
      },
      { key: "guests" },
    );
    if (answer.action !== "accept") return `Hold ${hold.id} released`;
    return `Table for ${answer.content?.guests} booked (hold ${hold.id})`;
  },
});
