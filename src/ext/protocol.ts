/**
 * The protocol's own methods that belong to no primitive, as extensions: experimental capabilities,
 * logging (`logging/setLevel`) and `server/discover` (2026-07-28).
 */
import { shapeImplementation } from "../eras/serialize.js";
import { type CacheHint, logLevelOf, META } from "../eras/stateless.js";
import { type Features, SUPPORTED_VERSIONS } from "../eras/versions.js";
import type { Extension } from "../extension.js";
import { EMPTY, type Implementation, type ServerCapabilities } from "../types.js";

const LOGGING = Object.freeze({ logging: Object.freeze({}) });

/** The `experimental` capabilities the server's options declare, as given. */
export function experimentalExtension(experimental: { [key: string]: object }): Extension {
  const caps = Object.freeze({ experimental });
  return { id: "picomcp/experimental", capabilities: () => caps };
}

/** Logging: the `logging` capability, and a session's `logging/setLevel` (a 2026-07-28 request names its level in `_meta`). */
export function loggingExtension(): Extension {
  return {
    id: "picomcp/logging",
    capabilities: () => LOGGING,
    methods: {
      "logging/setLevel": {
        era: "session",
        run: (p, ctx) => {
          ctx.setLogLevel(logLevelOf(p.level));
          return EMPTY;
        },
      },
    },
  };
}

/** What `server/discover` tells. */
export interface DiscoverOptions {
  /** The server's name, version and display fields. */
  readonly info: Implementation;
  readonly instructions: string | undefined;
  /** The caching hint of the answer. */
  readonly cache: CacheHint;
  /** The capabilities declared to revision `f` now. */
  readonly capabilities: (f: Features) => ServerCapabilities;
}

/** `server/discover` (2026-07-28): the revisions, capabilities and instructions, made once per registration change. */
export function discoverExtension(o: DiscoverOptions): Extension {
  let made: { caps: ServerCapabilities; result: { [key: string]: unknown } } | undefined;
  return {
    id: "picomcp/discover",
    methods: {
      "server/discover": {
        era: "stateless",
        run: (_p, ctx) => {
          ctx.cache(o.cache);
          const caps = o.capabilities(ctx.features);
          if (made?.caps !== caps) {
            const result: { [key: string]: unknown } = {
              supportedVersions: SUPPORTED_VERSIONS,
              capabilities: caps,
            };
            if (o.instructions !== undefined) result.instructions = o.instructions;
            // the one answer that tells a stateless client the server's title, description, icons, website
            result._meta = { [META.serverInfo]: shapeImplementation(o.info, ctx.features) };
            made = { caps, result };
          }
          return made.result;
        },
      },
    },
  };
}
