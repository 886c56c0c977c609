import { Ajv2020 } from "ajv/dist/2020.js";
import { type JsonSchemaValidator, McpServer } from "picomcp";

const ajv = new Ajv2020({ allErrors: true, strict: false });

/** ajv in place of picomcp's validator, for every plain JSON Schema `input` and `output`. */
const jsonSchemaValidator: JsonSchemaValidator = {
  compile(schema) {
    const validate = ajv.compile(schema); // throws at registration when ajv refuses the schema
    return (value) =>
      validate(value) ||
      (validate.errors ?? []).map((e) => ({
        path: e.instancePath.slice(1).replaceAll("/", "."), // "/tags/2" → "tags.2"
        message: e.message ?? "is invalid",
      }));
  },
};

export const server = new McpServer({ name: "bookshop", version: "1.0.0", jsonSchemaValidator });

server.tool("tag_book", {
  input: {
    type: "object",
    properties: { id: { type: "integer" }, tags: { type: "array", items: { type: "string" } } },
    required: ["id"],
    additionalProperties: false,
  },
  run: ({ id, tags }) => `Tagged ${id}: ${tags?.join(", ") ?? "nothing"}`,
});
