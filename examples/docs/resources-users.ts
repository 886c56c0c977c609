import { McpError, McpServer } from "picomcp";

export const server = new McpServer({ name: "users", version: "1.0.0" });

const db = { users: { find: async (id: string) => (id === "42" ? { id, name: "Ada" } : undefined) } };

server.resource("users://{id}", {
  description: "A user",
  read: async ({ id }) => {
    const user = await db.users.find(id);
    if (!user) throw new McpError(-32002, `Resource not found: users://${id}`);
    return user;
  },
});
