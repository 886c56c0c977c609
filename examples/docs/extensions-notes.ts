import { ErrorCode, McpError, McpServer, sessionSlot } from "picomcp";

export const server = new McpServer({ name: "notes", version: "1.0.0" });

/** Each session's notes, made on first use and dropped with the session. */
const notes = sessionSlot("com.example/notes", () => [] as string[]);

server.use({
  id: "com.example/notes",
  methods: {
    "notes/add": {
      // a 2026-07-28 request has no session to keep notes in
      era: "session",
      run: (params, ctx) => {
        if (typeof params.text !== "string")
          throw new McpError(ErrorCode.InvalidParams, "notes/add needs a text string");
        const list = ctx.sessionState(notes);
        if (list.length >= 20) throw new McpError(ErrorCode.InvalidParams, "At most 20 notes", { max: 20 });
        list.push(params.text);
        return { count: list.length };
      },
    },
    "notes/list": { era: "session", run: (_params, ctx) => ({ notes: ctx.sessionState(notes) }) },
  },
  notifications: {
    // the client tells the server, and expects no answer
    "notifications/notes/cleared": (_params, ctx) => {
      ctx.sessionState(notes).length = 0;
    },
  },
});
