// The one fixture every contender serves, and the command line every contender server reads.
//   node bench/servers/<name>.js stdio|http [--sessions] [--templates N] [--statics N] [--plain] [--zod]
// Tool `echo` (zod `{ text: string }`) answers its text; `users://{id}/profile` answers `profile <id>`;
// N extra templates `res<i>://items/{id}` are registered first, so that a linear scan passes all of them;
// `static://item/<i>` are S static resources for `resources/list`. Over HTTP the server prints `PORT <n>`.

export function parseArgs(argv = process.argv.slice(2)) {
  const value = (flag, fallback) => {
    const i = argv.indexOf(flag);
    return i === -1 ? fallback : Number(argv[i + 1]);
  };
  return {
    transport: argv[0] === "http" ? "http" : "stdio",
    sessions: argv.includes("--sessions"),
    /** The echo tool's input as a plain JSON Schema, so that zod is never loaded (picomcp, for cold start). */
    plain: argv.includes("--plain"),
    /** The floor imports zod without using it: what the fixture's schema library costs any server that loads it. */
    zod: argv.includes("--zod"),
    templates: value("--templates", 10),
    statics: value("--statics", 0),
    /** picomcp only: telemetry on (`noop`: the API without an SDK; `sdk`: the real SDK, see otel.js). */
    otel: argv.includes("--otel") ? argv[argv.indexOf("--otel") + 1] : undefined,
  };
}

export const profileText = (id) => `profile ${id}`;
export const itemText = (i, id) => `item ${i} ${id}`;

/** Listens on 127.0.0.1, a free port, and tells the bench which. */
export function announce(server) {
  server.listen(0, "127.0.0.1", () => process.stdout.write(`PORT ${server.address().port}\n`));
}
