/**
 * The protocol revisions picomcp serves, as data: one row per revision, each saying what changed
 * from the revision before it. Every version-dependent decision reads a flag of {@link Features},
 * so that "may this client receive X?" is answered here and nowhere else. A new revision is a new
 * row (and, where it changes a shape, a flag that the one shaper in `serialize.ts` reads).
 */

/**
 * What a revision can carry. A flag names what it means, never the revision it arrived in.
 */
export interface Features {
  readonly version: ProtocolVersion;
  /** Requests carry their own revision and client in `_meta` (no `initialize`, no session), results their `resultType` and caching hints. */
  readonly stateless: boolean;
  /** `audio` content, tool `annotations`, progress `message`, the `completions` capability. */
  readonly audio: boolean;
  readonly toolAnnotations: boolean;
  readonly progressMessage: boolean;
  readonly completionsCapability: boolean;
  /** JSON-RPC batches are received. */
  readonly batching: boolean;
  /** `title`, `_meta` on primitives and content, `resource_link`, structured output, `lastModified`,
   * form elicitation, completion `context`. */
  readonly title: boolean;
  readonly primitiveMeta: boolean;
  readonly resourceLink: boolean;
  readonly structuredOutput: boolean;
  readonly lastModified: boolean;
  readonly elicitation: boolean;
  /** `icons`, and `description`/`websiteUrl` on the server's info. */
  readonly icons: boolean;
  readonly implementationDetails: boolean;
  /** URL-mode elicitation with an `elicitationId` and its completion notification. */
  readonly urlElicitation: boolean;
  /** Tasks as core protocol: the `tasks` capability, `params.task`, `tasks/result`, a tool's `execution`. */
  readonly sessionTasks: boolean;
  /** An SSE stream opens with an event that carries only an id, so the client can resume it from the start. */
  readonly ssePriming: boolean;
  /** An error answer whose request id could not be read carries `id: null` (else no id). */
  readonly nullErrorId: boolean;
  /** The code for "resource not found". */
  readonly resourceNotFoundCode: number;
}

type Flags = Omit<Features, "version">;

/** What the oldest revision carries. */
const BASE: Flags = {
  stateless: false,
  audio: false,
  toolAnnotations: false,
  progressMessage: false,
  completionsCapability: false,
  batching: false,
  title: false,
  primitiveMeta: false,
  resourceLink: false,
  structuredOutput: false,
  lastModified: false,
  elicitation: false,
  icons: false,
  implementationDetails: false,
  urlElicitation: false,
  sessionTasks: false,
  ssePriming: false,
  nullErrorId: true,
  resourceNotFoundCode: -32002,
};

/** Every revision, oldest first, with what changed from the one before. */
const HISTORY = [
  ["2024-11-05", {}],
  [
    "2025-03-26",
    {
      audio: true,
      toolAnnotations: true,
      progressMessage: true,
      completionsCapability: true,
      batching: true,
    },
  ],
  [
    "2025-06-18",
    {
      batching: false,
      title: true,
      primitiveMeta: true,
      resourceLink: true,
      structuredOutput: true,
      lastModified: true,
      elicitation: true,
    },
  ],
  [
    "2025-11-25",
    {
      icons: true,
      implementationDetails: true,
      urlElicitation: true,
      sessionTasks: true,
      ssePriming: true,
      nullErrorId: false,
    },
  ],
  [
    "2026-07-28",
    { stateless: true, urlElicitation: false, sessionTasks: false, resourceNotFoundCode: -32602 },
  ],
] as const satisfies readonly (readonly [string, Partial<Flags>])[];

/** A protocol revision picomcp serves. */
export type ProtocolVersion = (typeof HISTORY)[number][0];

const table = new Map<string, Features>();
{
  let flags = BASE;
  for (const [version, changes] of HISTORY) {
    flags = { ...flags, ...changes };
    table.set(version, Object.freeze({ version, ...flags }));
  }
}

const newestFirst = [...table.values()].reverse();

/** Every revision served, newest first: `server/discover` and -32022 list these. */
export const SUPPORTED_VERSIONS: readonly ProtocolVersion[] = Object.freeze(
  newestFirst.map((f) => f.version),
);
/** The revisions served through the `initialize` handshake, newest first. */
export const SESSION_VERSIONS: readonly ProtocolVersion[] = Object.freeze(
  newestFirst.filter((f) => !f.stateless).map((f) => f.version),
);
/** The stateless revisions (per-request `_meta`, `server/discover`), newest first. */
export const STATELESS_VERSIONS: readonly ProtocolVersion[] = Object.freeze(
  newestFirst.filter((f) => f.stateless).map((f) => f.version),
);
/** The revisions that receive JSON-RPC batches. */
export const BATCHING_VERSIONS: readonly ProtocolVersion[] = Object.freeze(
  newestFirst.filter((f) => f.batching).map((f) => f.version),
);
/**
 * The revision of an HTTP request without `MCP-Protocol-Version` and without a session: the
 * transport spec says to assume 2025-03-26, the revision before the header existed.
 */
export const HEADERLESS_VERSION: ProtocolVersion = "2025-03-26";
/** The newest handshake revision: the answer to an `initialize` asking for a version picomcp does not know. */
export const LATEST_SESSION_VERSION: ProtocolVersion = SESSION_VERSIONS[0]!;
/** The newest stateless revision. */
export const LATEST_STATELESS_VERSION: ProtocolVersion = STATELESS_VERSIONS[0]!;

/** The features of `version`, or undefined for a revision picomcp does not serve. */
export function revision(version: unknown): Features | undefined {
  return typeof version === "string" ? table.get(version) : undefined;
}

/** The features of a revision picomcp serves. */
export function featuresOf(version: ProtocolVersion): Features {
  return table.get(version)!;
}

/** Whether `version` is a revision served through the `initialize` handshake. */
export function isSessionVersion(version: unknown): version is ProtocolVersion {
  return revision(version)?.stateless === false;
}

/** Whether `version` is a stateless revision picomcp serves. */
export function isStatelessVersion(version: unknown): version is ProtocolVersion {
  return revision(version)?.stateless === true;
}

/** Features used before a client has negotiated anything (the newest handshake revision). */
export const DEFAULT_FEATURES: Features = featuresOf(LATEST_SESSION_VERSION);
/** Features of a stateless request (the newest stateless revision). */
export const STATELESS_FEATURES: Features = featuresOf(LATEST_STATELESS_VERSION);
