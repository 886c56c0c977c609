import { type ExtensionHost, McpServer, sessionSlot } from "picomcp";

export const server = new McpServer({ name: "bulletins", version: "1.0.0" });

/** Whether a session asked for bulletins: kept in its own slot, made only for one that asks. */
const optedIn = sessionSlot("com.example/bulletins", () => ({ since: 0 }));
/** The server this extension was added to, given once by `attach`. */
let host: ExtensionHost | undefined;
/** How many sessions read bulletins now. */
export let readers = 0;

server.use({
  id: "com.example/bulletins",
  attach: (h) => {
    host = h;
  },
  methods: {
    "bulletins/subscribe": {
      era: "session",
      run: (_params, ctx) => {
        const mine = ctx.sessionState(optedIn);
        if (mine.since === 0) readers++;
        mine.since ||= Date.now();
        return {};
      },
    },
  },
  // once per session, however it ends: its slots are still there
  sessionEnd: (session) => {
    if (session.peek(optedIn)) readers--;
  },
});

/** Posts a bulletin to every open session that asked for them, outside any request; how many it reached. */
export function post(text: string): number {
  let sent = 0;
  for (const session of host?.sessions() ?? []) {
    if (session.peek(optedIn) === undefined) continue;
    session.notify("notifications/bulletins/posted", { text });
    sent++;
  }
  return sent;
}
