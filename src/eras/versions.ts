/** Protocol revisions served with the `initialize` handshake, newest first. */
export const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;
/** The newest revision of the `initialize` era; the answer to a version picomcp does not know. */
export const LATEST_LEGACY_VERSION = "2025-11-25";
/** The stateless revision (per-request `_meta`, `server/discover`). */
export const MODERN_VERSION = "2026-07-28";

/** A protocol revision picomcp serves. */
export type ProtocolVersion = (typeof LEGACY_VERSIONS)[number] | typeof MODERN_VERSION;

/**
 * What a revision can carry. Every version-dependent decision reads one of these flags, so that the
 * question "may this client receive X?" is answered in exactly one table.
 */
export interface Features {
  readonly version: ProtocolVersion;
  /** 2026-07-28: stateless, `resultType`, caching hints. */
  readonly modern: boolean;
  /** `instructions` in the initialize result. */
  readonly instructions: boolean;
  /** `audio` content, tool `annotations`, progress `message`, the `completions` capability (2025-03-26+). */
  readonly audio: boolean;
  readonly toolAnnotations: boolean;
  readonly progressMessage: boolean;
  readonly completionsCapability: boolean;
  /** JSON-RPC batches are received (2025-03-26 only). */
  readonly batching: boolean;
  /** `title`, `_meta` on primitives and content, `resource_link`, structured output, `lastModified`,
   * elicitation, completion `context` (2025-06-18+). */
  readonly title: boolean;
  readonly primitiveMeta: boolean;
  readonly resourceLink: boolean;
  readonly structuredOutput: boolean;
  readonly lastModified: boolean;
  readonly elicitation: boolean;
  /** `icons`, `description`/`websiteUrl` on the server's info, URL elicitation (2025-11-25+). */
  readonly icons: boolean;
  readonly implementationDetails: boolean;
  readonly urlElicitation: boolean;
  /** An error answer whose request id could not be read carries `id: null` (up to 2025-06-18) or no id. */
  readonly nullErrorId: boolean;
  /** The code for "resource not found": -32002 before 2026-07-28, -32602 from then on. */
  readonly resourceNotFoundCode: number;
}

const order: readonly ProtocolVersion[] = [
  "2024-11-05",
  "2025-03-26",
  "2025-06-18",
  "2025-11-25",
  MODERN_VERSION,
];

function build(version: ProtocolVersion): Features {
  const at = (since: ProtocolVersion) => order.indexOf(version) >= order.indexOf(since);
  return Object.freeze({
    version,
    modern: version === MODERN_VERSION,
    instructions: true,
    audio: at("2025-03-26"),
    toolAnnotations: at("2025-03-26"),
    progressMessage: at("2025-03-26"),
    completionsCapability: at("2025-03-26"),
    batching: version === "2025-03-26",
    title: at("2025-06-18"),
    primitiveMeta: at("2025-06-18"),
    resourceLink: at("2025-06-18"),
    structuredOutput: at("2025-06-18"),
    lastModified: at("2025-06-18"),
    elicitation: at("2025-06-18"),
    icons: at("2025-11-25"),
    implementationDetails: at("2025-11-25"),
    urlElicitation: version === "2025-11-25",
    nullErrorId: !at("2025-11-25"),
    resourceNotFoundCode: version === MODERN_VERSION ? -32602 : -32002,
  });
}

const table = new Map<string, Features>(order.map((v) => [v, build(v)]));

/** The features of a revision picomcp serves. */
export function featuresOf(version: ProtocolVersion): Features {
  return table.get(version)!;
}

/** Whether `version` is a revision served through the `initialize` handshake. */
export function isLegacyVersion(version: unknown): version is (typeof LEGACY_VERSIONS)[number] {
  return typeof version === "string" && (LEGACY_VERSIONS as readonly string[]).includes(version);
}

/** Features used before a client has negotiated anything (the newest handshake revision). */
export const DEFAULT_FEATURES: Features = featuresOf(LATEST_LEGACY_VERSION);
