import assert from "node:assert/strict";
import { connect } from "picomcp/testing";
import { server as reviews } from "./prompts-review.js";
import { server } from "./tools-search.js";

const client = await connect(server);
assert.deepEqual(await client.callTool("search_books", { query: "dis" }), {
  content: [{ type: "text", text: "The Dispossessed" }],
});

const prompts = await connect(reviews);
const { completion } = await prompts.complete(
  { type: "ref/prompt", name: "translate" },
  { argument: "to", value: "", arguments: { text: "Bonjour" } },
);
assert.deepEqual(completion.values, ["English"]);
