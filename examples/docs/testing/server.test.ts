import assert from "node:assert/strict";
import { connect } from "picomcp/testing";
import { server } from "./server.js";

const client = await connect(server);

assert.deepEqual(await client.callTool("search_books", { query: "owls" }), {
  content: [{ type: "text", text: "No books about owls yet" }],
});

// a tool's invalid arguments are its error result, for the model to read
const bad = await client.callTool("search_books", {});
assert.equal(bad.isError, true);

const { contents } = await client.readResource("books://7/reviews?lang=fr");
assert.deepEqual(contents, [
  { uri: "books://7/reviews?lang=fr", mimeType: "text/plain", text: "Reviews of book 7 (fr): ★★★★☆" },
]);
