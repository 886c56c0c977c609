// Resolve hook: the conformance CLI (either installed version) gets fs-shim.mjs for "fs".
const CLI_DIRS = ["/node_modules/@modelcontextprotocol/conformance/", "/node_modules/conformance-next/"];

export async function resolve(specifier, context, next) {
  if (
    (specifier === "fs" || specifier === "node:fs") &&
    CLI_DIRS.some((d) => context.parentURL?.includes(d))
  ) {
    return { url: new URL("./fs-shim.mjs", import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
