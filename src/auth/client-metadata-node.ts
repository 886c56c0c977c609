/**
 * Fetching a client metadata document on Node (only): `node:https`/`node:http` with a `lookup` that
 * checks every address the connection would use, so a DNS answer that changes between the early check
 * and the connection (rebinding) is refused too. Node's modules are asked for at run time
 * (`process.getBuiltinModule`), never imported: a bundler for Workers or the browser finds no `node:*`
 * to follow, and picomcp/auth still loads there (this code then never runs).
 */
import type { LookupAddress } from "node:dns";
import type { IncomingMessage } from "node:http";
import type { LookupFunction } from "node:net";

/** One address a host name resolves to. */
interface Resolved {
  address: string;
  family?: number;
}

interface NodeModules {
  dns: typeof import("node:dns");
  http: typeof import("node:http");
  https: typeof import("node:https");
  net: typeof import("node:net");
}

let loaded: Promise<NodeModules> | undefined;

/** Node's own modules: `process.getBuiltinModule` (Node 20.16 and later), else an import no bundler follows. */
function nodeModules(): Promise<NodeModules> {
  loaded ??= (async () => {
    const proc = (globalThis as { process?: { getBuiltinModule?(id: string): unknown } }).process;
    const load = async <T>(id: string): Promise<T> =>
      (proc?.getBuiltinModule ? proc.getBuiltinModule(id) : await import(id)) as T;
    const [dns, http, https, net] = await Promise.all([
      load<NodeModules["dns"]>("node:dns"),
      load<NodeModules["http"]>("node:http"),
      load<NodeModules["https"]>("node:https"),
      load<NodeModules["net"]>("node:net"),
    ]);
    return { dns, http, https, net };
  })();
  return loaded;
}

/** `node:dns` `lookup` with every address, in the resolver's order. */
export async function lookupAll(hostname: string): Promise<Resolved[]> {
  const { dns } = await nodeModules();
  return new Promise((resolve, reject) => {
    dns.lookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });
}

/** A `lookup` for `net.connect` that resolves with `resolve` and refuses (throws from `check`) any address not allowed. */
function guarded(
  isIP: (address: string) => number,
  resolve: (hostname: string) => Promise<readonly Resolved[]>,
  check: (address: string) => void,
  refuse: (message: string, detail?: string) => Error,
): LookupFunction {
  const unresolved = "the client_id's host could not be resolved";
  return (hostname, options, callback) => {
    const answer = callback as (
      error: Error | null,
      address?: string | LookupAddress[],
      family?: number,
    ) => void;
    // a resolver that throws at once fails the request too, never the process
    Promise.resolve(hostname)
      .then(resolve)
      .then(
        (found) => {
          const want = options.family === 4 || options.family === 6 ? options.family : undefined;
          const list = found
            .map(({ address, family }) => ({
              address,
              family: family === 4 || family === 6 ? family : isIP(address),
            }))
            .filter((a) => a.family !== 0 && (want === undefined || a.family === want));
          if (list.length === 0) throw refuse(unresolved);
          for (const { address } of list) check(address);
          if (options.all) answer(null, list);
          else answer(null, list[0]!.address, list[0]!.family);
        },
        (error: unknown) => {
          throw refuse(unresolved, String(error));
        },
      )
      .catch((error: Error) => answer(error));
  };
}

/** What `get` needs: the resolver, the address check, the deadline's signal. */
export interface NodeGetOptions {
  lookup: ((hostname: string) => Promise<readonly Resolved[]>) | undefined;
  check: (address: string) => void;
  /** Makes the error a refusal throws (the caller's error class, for the client). */
  refuse: (message: string, detail?: string) => Error;
  signal: AbortSignal;
}

/**
 * GET `url` on a connection of its own (no agent, no keep-alive), following no redirect. Resolves once
 * the status and headers are in; `close` destroys the connection, read or not.
 */
export async function get(url: URL, options: NodeGetOptions) {
  const { http, https, net } = await nodeModules();
  const request = url.protocol === "https:" ? https.request : http.request;
  return new Promise<{
    status: number;
    header(name: string): string | undefined;
    next(): Promise<Uint8Array | undefined>;
    close(): void;
  }>((resolve, reject) => {
    const req = request(url, {
      method: "GET",
      agent: false,
      headers: { accept: "application/json" },
      lookup: guarded(net.isIP, options.lookup ?? lookupAll, options.check, options.refuse),
      signal: options.signal,
      maxHeaderSize: 16 * 1024,
    });
    req.on("error", reject);
    req.on("response", (res: IncomingMessage) => {
      res.on("error", () => {}); // a connection destroyed before its body was read is no fault here
      const chunks = res[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
      resolve({
        status: res.statusCode ?? 0,
        header: (name) => {
          const value = res.headers[name.toLowerCase()];
          return Array.isArray(value) ? value.join(", ") : value;
        },
        next: async () => {
          const { done, value } = await chunks.next();
          return done ? undefined : value;
        },
        close: () => req.destroy(),
      });
    });
    req.end();
  });
}
