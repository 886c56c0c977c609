import { describe, expectTypeOf, it } from "vitest";
import { type LooseUriParams, McpServer, type ResourceContext } from "../../src/index.js";

const server = new McpServer({ name: "types", version: "1" });

describe("server.resource types follow the URI", () => {
  it("types read's params and complete's keys from the literal", () => {
    server.resource("github://{owner}/{repo}/readme{?ref}", {
      complete: {
        owner: (value) => [value],
        ref: () => [],
        // @ts-expect-error: no variable "branch" in the template
        branch: () => [],
      },
      read: (params, ctx) => {
        expectTypeOf(params).toEqualTypeOf<{ owner: string; repo: string; ref?: string }>();
        expectTypeOf(ctx).toEqualTypeOf<ResourceContext>();
        expectTypeOf(ctx.uri).toBeString();
        // @ts-expect-error: no variable "branch" in the template
        params.branch;
        return "";
      },
    });
    server.resource("tree://{/segs*}{?tags*}", {
      unsafe: ["segs"],
      read: ({ segs, tags }) => {
        expectTypeOf(segs).toEqualTypeOf<string[]>();
        expectTypeOf(tags).toEqualTypeOf<Record<string, string | string[]> | undefined>();
        return segs.join("/");
      },
    });
    server.resource("config://app", {
      read: (params) => {
        expectTypeOf(params).toEqualTypeOf<{}>();
        return "";
      },
    });
  });

  it("rejects misuse", () => {
    server.resource("users://{id}", {
      // @ts-expect-error: "name" is not a variable of the template
      unsafe: ["name"],
      // @ts-expect-error: a simple variable is a string, not a string[]
      read: ({ id }: { id: string[] }) => id,
    });
  });

  it("falls back to a loose record for a non-literal string", () => {
    const uri: string = `dyn://${"x"}/{id}`;
    server.resource(uri, {
      read: (params) => {
        expectTypeOf(params).toEqualTypeOf<LooseUriParams>();
        return "";
      },
    });
  });
});
