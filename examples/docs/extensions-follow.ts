import { type Context, McpServer } from "picomcp";

export const server = new McpServer({ name: "newsroom", version: "1.0.0" });

let headline = "Nothing yet";
server.resource("news://headline", { read: () => headline });
export function publish(text: string) {
  headline = text;
  server.resourceUpdated("news://headline");
}

/** The open follow requests, by session, each with how many updates it was sent. */
const following = new Map<string, Set<{ ctx: Context; sent: number }>>();

server.use({
  id: "com.example/follow",
  methods: {
    "follow/updates": {
      // open until the client cancels it, or the server ends it with its final result
      run: async (_params, ctx) => {
        const mine = following.get(ctx.sessionId) ?? new Set();
        following.set(ctx.sessionId, mine);
        const follower = { ctx, sent: 0 };
        mine.add(follower);
        ctx.notify("notifications/follow/started");
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
        mine.delete(follower);
        if (mine.size === 0) following.delete(ctx.sessionId);
        return {}; // never sent: a cancelled request is not answered, an ended one already was
      },
    },
  },
  // every change event that reaches this server (this process's, or another instance's on a shared bus)
  change: (event) => {
    if (event.type !== "resource_updated") return;
    for (const mine of following.values())
      for (const follower of mine) {
        follower.sent++;
        follower.ctx.notify("notifications/follow/updated", { uri: event.uri });
      }
  },
  // the server ends this session gracefully (close, drain, end of stdio input)
  sessionEnd: ({ sessionId }) => {
    for (const follower of following.get(sessionId) ?? []) follower.ctx.end({ updates: follower.sent });
  },
});
