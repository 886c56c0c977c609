/**
 * Fetching a Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document) without letting
 * its URL reach what the server can reach and the client cannot: address classes refused, no redirects,
 * size and time caps, JSON only, the document validated, its caching headers read.
 */
import { type AddressKind, addressKind, isIpAddress } from "./addresses.js";
import {
  ClientMetadataError,
  clientFromDocument,
  clientIdUrl,
  isLoopbackName,
  ttlOf,
} from "./client-metadata-document.js";
import { lookupAll, get as nodeGet } from "./client-metadata-node.js";
import type { ClientRecord } from "./store.js";

export type { AddressKind } from "./addresses.js";
export { ClientMetadataError } from "./client-metadata-document.js";

/** One address a host name resolves to; `family` 4 or 6 (found from the address when absent). */
export interface ResolvedAddress {
  address: string;
  family?: number;
}

/** Resolves a host name to all of its addresses, as `node:dns`'s `lookup(name, { all: true })` does. */
export type HostLookup = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** Options of {@link fetchClientMetadata}. */
export interface ClientMetadataOptions {
  /**
   * Lets documents come from loopback addresses, and over plain http from a loopback host (`127.0.0.1`,
   * `[::1]`, `localhost`, whose every address must then be loopback): for development. Default: false.
   */
  allowLoopback?: boolean;
  /**
   * Lets an address of a refused class through (a private network you trust, say): called with the
   * address and its class; true lets it be connected to. Default: none, every class refused.
   */
  allowAddress?: (address: string, kind: AddressKind) => boolean;
  /** The only hosts documents may come from: exact host names (lower case), or a predicate. Default: any host. */
  allowedHosts?: readonly string[] | ((hostname: string) => boolean);
  /** The largest document read, in bytes; reading stops past it. Default: 5120. */
  maxBytes?: number;
  /** The time for the whole fetch (lookup, connection, headers and body), in ms. Default: 5000. */
  timeoutMs?: number;
  /** `ttlMs` when the answer has no `Cache-Control` `max-age`. Default: 300000 (5 minutes). */
  defaultTtlMs?: number;
  /** The shortest `ttlMs` a `max-age` gives. Default: 60000. */
  minTtlMs?: number;
  /** The longest `ttlMs` a `max-age` gives. Default: 86400000 (a day). */
  maxTtlMs?: number;
  /**
   * Resolves host names for the address checks (and, on Node, for the connection itself). Default: on
   * Node `node:dns` `lookup`, on Deno `Deno.resolveDns`, on Bun `Bun.dns.lookup`, elsewhere none.
   */
  lookup?: HostLookup;
  /**
   * Fetches the document instead of `node:https` (on Node) or the global `fetch` (elsewhere); called with
   * `redirect: "manual"` and the deadline's `signal`. Addresses are then checked before the fetch only.
   * Default: none.
   */
  fetch?: (input: URL, init: RequestInit) => Promise<Response>;
}

/** What {@link fetchClientMetadata} found: the client, and how long it may be kept (0: not at all). */
export interface ClientMetadata {
  client: ClientRecord;
  ttlMs: number;
}

/** One answer, read the same way whichever way it was fetched. */
interface Answer {
  status: number;
  header(name: string): string | undefined;
  next(): Promise<Uint8Array | undefined>;
  close(): void;
}

interface Platform {
  process?: { versions?: { node?: string } };
  navigator?: { userAgent?: string };
  Deno?: { resolveDns(name: string, type: "A" | "AAAA"): Promise<string[]> };
  Bun?: { dns?: { lookup(name: string): Promise<ResolvedAddress[]> } };
}

const platform = globalThis as Platform;
// Deno, Bun and Workers with Node compatibility say they are Node too; their own names tell them apart
const agent = platform.navigator?.userAgent;
const onNode =
  !!platform.process?.versions?.node &&
  !platform.Deno &&
  !platform.Bun &&
  (agent === undefined || agent.startsWith("Node.js"));

/** The runtime's own resolver, when it has one picomcp can call. */
function platformLookup(): HostLookup | undefined {
  const deno = platform.Deno;
  if (deno?.resolveDns) {
    return async (name) => {
      const found = await Promise.allSettled([deno.resolveDns(name, "A"), deno.resolveDns(name, "AAAA")]);
      // a name with no address of one family is common; with neither, say why (no --allow-net, say)
      if (found[0].status === "rejected" && found[1].status === "rejected") throw found[0].reason;
      return found.flatMap((r) => (r.status === "fulfilled" ? r.value.map((address) => ({ address })) : []));
    };
  }
  const bun = platform.Bun?.dns;
  if (bun?.lookup) return (name) => bun.lookup(name);
  return undefined;
}

/**
 * Fetches and validates the Client ID Metadata Document at `clientId`, an https URL, and says how long
 * it may be cached. Throws {@link ClientMetadataError} (its message is for the client) when the URL, the
 * address it leads to, the answer or the document is refused. Calls made while one is under way, for
 * the same URL with the same options object, share its fetch. What each runtime guarantees is in
 * docs/security.md ("Client ID Metadata Documents").
 */
export async function fetchClientMetadata(
  clientId: string,
  options?: ClientMetadataOptions,
): Promise<ClientMetadata> {
  // many authorization requests naming one URL at once make one fetch, not one each
  const key = options ?? NO_OPTIONS;
  const pending = inFlight.get(key) ?? new Map<string, Promise<ClientMetadata>>();
  inFlight.set(key, pending);
  let fetching = pending.get(clientId);
  if (!fetching) {
    const running = fetchOnce(clientId, options ?? {});
    fetching = running;
    pending.set(clientId, running);
    const forget = () => {
      if (pending.get(clientId) === running) pending.delete(clientId);
    };
    running.then(forget, forget);
  }
  const { client, ttlMs } = await fetching;
  // each caller gets a record of its own to keep or change
  return { client: { ...client, redirect_uris: [...client.redirect_uris] }, ttlMs };
}

const NO_OPTIONS: ClientMetadataOptions = {};
const inFlight = new WeakMap<ClientMetadataOptions, Map<string, Promise<ClientMetadata>>>();

async function fetchOnce(clientId: string, options: ClientMetadataOptions): Promise<ClientMetadata> {
  const allowLoopback = options.allowLoopback ?? false;
  const maxBytes = options.maxBytes ?? 5120;
  const timeoutMs = options.timeoutMs ?? 5000;
  const url = clientIdUrl(clientId, (u) => allowLoopback && isLoopbackHost(u.hostname));
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const allowed = options.allowedHosts;
  if (allowed && !(typeof allowed === "function" ? allowed(host) : allowed.includes(host)))
    throw new ClientMetadataError("the client_id's host is not allowed");
  const plain = url.protocol === "http:";
  const check = (address: string): void => {
    const kind = addressKind(address);
    if (plain && kind !== "loopback")
      throw new ClientMetadataError("an http client_id must lead to loopback addresses only", address);
    if (kind === undefined || (kind === "loopback" && allowLoopback) || options.allowAddress?.(address, kind))
      return;
    throw new ClientMetadataError(`the client_id's host leads to a refused address (${kind})`, address);
  };

  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new ClientMetadataError(`the client metadata document was not fetched within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  let answer: Answer | undefined;
  const work = (async () => {
    if (isIpAddress(host)) check(host);
    else if (isLoopbackName(host) && !allowLoopback)
      throw new ClientMetadataError("the client_id's host leads to a refused address (loopback)", host);
    const lookup = options.lookup ?? (onNode ? lookupAll : platformLookup());
    // resolved and checked before anything connects; on Node the connection checks again (rebinding).
    // `localhost` names are loopback by definition (RFC 6761), and some resolvers (Deno's) ask the
    // network's DNS server instead of the hosts file: only the connection's lookup, on Node, sees them
    if (lookup && !isIpAddress(host) && !isLoopbackName(host)) {
      let found: readonly ResolvedAddress[];
      try {
        found = await lookup(host);
      } catch (error) {
        throw new ClientMetadataError("the client_id's host could not be resolved", String(error));
      }
      if (found.length === 0) throw new ClientMetadataError("the client_id's host could not be resolved");
      for (const { address } of found) check(address);
    }
    if (controller.signal.aborted) throw new ClientMetadataError("aborted");
    answer =
      onNode && !options.fetch
        ? await nodeGet(url, {
            lookup,
            check,
            refuse: (message, detail) => new ClientMetadataError(message, detail),
            signal: controller.signal,
          })
        : await viaFetch(url, options.fetch ?? fetch, controller.signal);
    return read(answer, clientId, maxBytes, options);
  })();
  work.catch(() => {}); // when the deadline wins, what work throws after is of no interest
  try {
    return await Promise.race([work, expired]);
  } catch (error) {
    if (error instanceof ClientMetadataError) throw error;
    throw new ClientMetadataError("the client metadata document could not be fetched", String(error));
  } finally {
    clearTimeout(timer);
    controller.abort();
    answer?.close();
  }
}

function isLoopbackHost(hostname: string): boolean {
  return (
    isLoopbackName(hostname) ||
    (isIpAddress(hostname.replace(/^\[|\]$/g, "")) && addressKind(hostname) === "loopback")
  );
}

async function viaFetch(
  url: URL,
  fetcher: NonNullable<ClientMetadataOptions["fetch"]>,
  signal: AbortSignal,
): Promise<Answer> {
  const res = await fetcher(url, {
    method: "GET",
    headers: { accept: "application/json" },
    redirect: "manual",
    signal,
  });
  const reader = res.body?.getReader();
  return {
    // a browser-like fetch hides a manual redirect as an opaque answer of status 0
    status: res.type === "opaqueredirect" ? 302 : res.status,
    header: (name) => res.headers.get(name) ?? undefined,
    next: async () => {
      if (!reader) return undefined;
      const { done, value } = await reader.read();
      return done ? undefined : value;
    },
    close: () => void reader?.cancel().catch(() => {}),
  };
}

async function read(
  answer: Answer,
  clientId: string,
  maxBytes: number,
  options: ClientMetadataOptions,
): Promise<ClientMetadata> {
  const { status } = answer;
  if (status >= 300 && status < 400)
    throw new ClientMetadataError(
      `the client metadata document redirects (HTTP ${status}); redirects are not followed`,
    );
  if (status !== 200) throw new ClientMetadataError(`the client metadata document answered HTTP ${status}`);
  const type = (answer.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json" && !/^application\/[a-z0-9.+-]+\+json$/.test(type))
    throw new ClientMetadataError("the client metadata document is not served as application/json");
  const tooLarge = `the client metadata document is larger than ${maxBytes} bytes`;
  const declared = Number(answer.header("content-length") ?? Number.NaN);
  if (declared > maxBytes) throw new ClientMetadataError(tooLarge);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let chunk = await answer.next(); chunk; chunk = await answer.next()) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new ClientMetadataError(tooLarge); // the caller closes the connection
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new ClientMetadataError("the client metadata document is not valid UTF-8 JSON");
  }
  const client = clientFromDocument(doc, clientId, Date.now());
  const ttlMs = ttlOf(
    answer.header("cache-control"),
    {
      defaultMs: options.defaultTtlMs ?? 300_000,
      minMs: options.minTtlMs ?? 60_000,
      maxMs: options.maxTtlMs ?? 86_400_000,
    },
    { expires: answer.header("expires"), date: answer.header("date"), age: answer.header("age") },
  );
  return { client, ttlMs };
}
