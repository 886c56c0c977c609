import { McpServer } from "picomcp";

export const server = new McpServer({ name: "shop", version: "1.0.0" });

server.tool("order", {
  description: "Place an order",
  input: {
    type: "object",
    $defs: { money: { type: "number", exclusiveMinimum: 0, multipleOf: 0.01 } },
    properties: {
      sku: { type: "string", pattern: "^[A-Z]{3}-\\d{4}$" },
      quantity: { type: "integer", minimum: 1 },
      price: { $ref: "#/$defs/money" },
    },
    required: ["sku", "quantity"],
    // a card needs its cvv; no property beyond those named here
    dependentRequired: { card: ["cvv"] },
    allOf: [{ properties: { card: { type: "string" }, cvv: { type: "string" } } }],
    unevaluatedProperties: false,
  },
  run: ({ sku, quantity }) => `Ordered ${quantity} × ${sku}`,
});
