/**
 * Type tests for prompt arguments, checked by `tsc --noEmit` (and harmlessly run by vitest): a list of
 * `args` keeps its types as written, without `as const`.
 */
import { McpServer } from "picomcp";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";

const server = new McpServer({ name: "types", version: "1.0.0" });

describe("server.prompt args", () => {
  it("types a list as written: required is string, optional is string | undefined", () => {
    server.prompt("translate", {
      args: [
        { name: "text", description: "What to translate", required: true },
        { name: "to", required: false },
        { name: "style" },
      ],
      complete: { to: () => ["French"] },
      get: (args) => {
        expectTypeOf(args).toEqualTypeOf<{
          text: string;
          to: string | undefined;
          style: string | undefined;
        }>();
        // @ts-expect-error: no argument "lang"
        args.lang;
        // @ts-expect-error: "to" may be missing
        args.to.toUpperCase();
        return args.text.toUpperCase();
      },
    });
  });

  it("refuses a completer for an argument that does not exist, in types and at registration", () => {
    expect(() =>
      server.prompt("p", {
        args: [{ name: "a" }],
        // @ts-expect-error: no argument "b" to complete
        complete: { b: () => [] },
        get: () => "",
      }),
    ).toThrow('Prompt "p": complete.b names no argument');
  });

  it("refuses a list entry without a name, in types and at registration", () => {
    expect(() =>
      server.prompt("q", {
        // @ts-expect-error: every argument needs a name
        args: [{ required: true }],
        get: () => "",
      }),
    ).toThrow('Prompt "q": every argument needs a name');
  });

  it("keeps a list declared as const elsewhere, and Standard Schemas", () => {
    const args = [{ name: "who", required: true }] as const;
    server.prompt("greet", {
      args,
      get: ({ who }) => {
        expectTypeOf(who).toEqualTypeOf<string>();
        return who;
      },
    });
    server.prompt("review", {
      args: z.object({ diff: z.string(), tone: z.string().optional() }),
      get: (a) => {
        expectTypeOf(a).toEqualTypeOf<{ diff: string; tone?: string | undefined }>();
        return a.diff;
      },
    });
  });

  it("gives no arguments without args", () => {
    server.prompt("plain", {
      get: (a) => {
        expectTypeOf(a).toEqualTypeOf<Record<string, never>>();
        return "";
      },
    });
  });
});
