// docs/composition.md: the Mount example does what the page says, through picomcp/testing.
import { connect } from "picomcp/testing";
import { describe, expect, it } from "vitest";
import { notes, server, unmountNotes, weather } from "../../examples/docs/composition-mount.js";

describe("docs/composition.md: Mount", () => {
  it("serves both children under their prefixes, URIs unchanged, live, and unmounts", async () => {
    const client = await connect(server);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "ping",
      "weather_forecast",
      "weather_alerts",
    ]);
    expect(await client.callTool("weather_forecast", { city: "Lyon" })).toEqual({
      content: [{ type: "text", text: "Sunny in Lyon" }],
    });
    expect((await client.readResource("weather://stations/nice-1")).contents).toEqual([
      { uri: "weather://stations/nice-1", mimeType: "text/plain", text: "Station nice-1: 18 °C" },
    ]);
    expect(
      await client.complete(
        { type: "ref/resource", uri: "weather://stations/{id}" },
        { argument: "id", value: "lyon" },
      ),
    ).toEqual({ completion: { values: ["lyon-1", "lyon-2"] } });
    expect((await client.getPrompt("notes_summarize", { topic: "trips" })).messages).toEqual([
      { role: "user", content: { type: "text", text: "Summarize my notes on trips" } },
    ]);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      "skill://notes-triage/SKILL.md",
      "notes://latest",
    ]);
    expect(() => weather.tool("forecast", { run: () => "" })).toThrow(
      'A tool named "forecast" is already registered',
    );
    expect(() => server.tool("weather_forecast", { run: () => "" })).toThrow(
      'Tool "weather_forecast" of server "assistant" collides with tool "weather_forecast" of mount "weather" (server "weather"): rename one, or mount under another prefix',
    );
    unmountNotes();
    await client.waitForNotification("notifications/prompts/list_changed");
    expect((await client.listPrompts()).prompts).toEqual([]);
    expect((await client.listResources()).resources).toEqual([]);
    // the child is still a server of its own
    const direct = await connect(notes);
    expect((await direct.listPrompts()).prompts.map((p) => p.name)).toEqual(["summarize"]);
  });
});
