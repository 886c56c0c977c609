import { McpServer } from "picomcp";

/** One team's server: tested on its own, served on its own, and mounted in the whole. */
export const weather = new McpServer({ name: "weather", version: "1.0.0" });
weather.tool("forecast", {
  description: "Tomorrow's forecast for a city",
  input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  run: ({ city }) => `Sunny in ${city}`,
});
weather.resource("weather://stations/{id}", {
  complete: { id: (prefix) => ["lyon-1", "lyon-2", "nice-1"].filter((id) => id.startsWith(prefix)) },
  read: ({ id }) => `Station ${id}: 18 °C`,
});

/** Another team's. */
export const notes = new McpServer({ name: "notes", version: "1.0.0" });
notes.prompt("summarize", {
  args: [{ name: "topic", required: true }],
  get: ({ topic }) => `Summarize my notes on ${topic}`,
});
notes.resource("notes://latest", { read: () => "Buy milk" });
notes.skill("triage", { description: "Sorts new notes into projects", instructions: "# Triage\n…" });

export const server = new McpServer({ name: "assistant", version: "1.0.0" });
server.tool("ping", { run: () => "pong" });
// tool weather_forecast; template weather://stations/{id}, completions routed to weather
server.mount("weather", weather);
// prompt notes_summarize; resource notes://latest; skill notes-triage (skill://notes-triage/SKILL.md)
const mounted = server.mount("notes", notes);

// a live mirror: the parent serves weather_alerts now, and its clients hear tools/list_changed
weather.tool("alerts", { run: () => "No alerts" });

/** Takes the notes server out again: its prompt, resource and skill leave the parent's lists. */
export function unmountNotes(): void {
  mounted.remove();
}
