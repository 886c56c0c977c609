/**
 * Client ID Metadata Documents: a stand-in until the real fetcher lands (it fetches and validates
 * the document with SSRF limits). This one refuses every document.
 */
import type { ClientRecord } from "./store.js";

/** Thrown when a client's metadata document cannot be used; its message is for the client. */
export class ClientMetadataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ClientMetadataError";
  }
}

/** Options of {@link fetchClientMetadata}. */
export interface ClientMetadataOptions {
  /** Whether an http document on a loopback address may be fetched (development). Default: false. */
  allowLoopback?: boolean;
}

/** Fetches and validates the Client ID Metadata Document at `clientId`: not available yet. */
export async function fetchClientMetadata(
  clientId: string,
  _options?: ClientMetadataOptions,
): Promise<{ client: ClientRecord; ttlMs: number }> {
  throw new ClientMetadataError(`not yet: client metadata documents are not supported (${clientId})`);
}
