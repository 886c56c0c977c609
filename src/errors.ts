/** The protocol's error codes, as named constants. */
export const ErrorCode = {
  /** The message is not valid JSON. */
  ParseError: -32700,
  /** Not a JSON-RPC request object. */
  InvalidRequest: -32600,
  /** Unknown method, or a method of a capability the server does not have. */
  MethodNotFound: -32601,
  /** Invalid params: unknown tool or prompt, bad cursor, bad arguments, … */
  InvalidParams: -32602,
  /** An unexpected failure inside the server. */
  InternalError: -32603,
  /** Resource not found (2024-11-05 … 2025-11-25 only; 2026-07-28 uses InvalidParams). */
  ResourceNotFound: -32002,
  /** The request needs a URL-mode elicitation first (2025-11-25). */
  UrlElicitationRequired: -32042,
  /** 2026-07-28: an HTTP header does not match the body. */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request needs a client capability it did not declare. */
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the requested protocol version is not supported. */
  UnsupportedProtocolVersion: -32022,
} as const;

/** One of the values of {@link ErrorCode}. */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * An error that reaches the client as a JSON-RPC error, with its code, message and data as given.
 * Throw it from a handler to answer with a protocol error; any other throw is reported as an
 * internal error with a generic message (the details go to the server's `onError` hook only).
 */
export class McpError extends Error {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** Optional structured data sent as `error.data`. */
  readonly data?: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "McpError";
    this.code = code;
    if (data !== undefined) this.data = data;
  }
}

/** Thrown by `elicit`, `sample` and `roots` when the client did not declare what they need. */
export class ClientCapabilityError extends Error {
  constructor(what: string, capability: string) {
    super(`The client does not support ${what}: it did not declare the \`${capability}\` capability`);
    this.name = "ClientCapabilityError";
  }
}
