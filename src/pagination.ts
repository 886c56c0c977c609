/** Opaque, stable list cursors: the position after the last item sent, checked on the way back in. */
import { ErrorCode, McpError } from "./errors.js";

const PREFIX = "p1.";

/**
 * Items per page when a server's `pageSize` option says nothing: 2000. A client that wants everything
 * pays a round trip a page, so few large pages cost it least (10,000 resources: 5 round trips, not
 * 100), while a page stays small enough to arrive and parse quickly (about 114 kB for 2000 short
 * resources) and the first answer costs the same however long the list is. docs/resources.md
 * (pagination) gives the measurements.
 */
export const DEFAULT_PAGE_SIZE = 2000;

/** Items per page of every list result, as a server's `pageSize` option says (default {@link DEFAULT_PAGE_SIZE}). */
export function pageSizeOf(pageSize = DEFAULT_PAGE_SIZE): number {
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new RangeError("pageSize must be a positive integer");
  return pageSize;
}

/** One page of `items` after `cursor`, with the cursor of the next page when there is one. */
export function paginate<T>(
  items: readonly T[],
  cursor: unknown,
  pageSize: number,
): { page: T[]; nextCursor: string | undefined } {
  const start = cursor === undefined ? 0 : decodeCursor(cursor, items.length);
  const end = Math.min(start + pageSize, items.length);
  return { page: items.slice(start, end), nextCursor: end < items.length ? encodeCursor(end) : undefined };
}

/** The cursor for position `n`. */
export function encodeCursor(n: number): string {
  return PREFIX + n.toString(36);
}

/** The position in a cursor; an invalid one is -32602. */
export function decodeCursor(cursor: unknown, limit: number): number {
  if (typeof cursor === "string" && cursor.startsWith(PREFIX) && cursor.length <= 16) {
    const digits = cursor.slice(PREFIX.length);
    const n = /^[0-9a-z]+$/.test(digits) ? Number.parseInt(digits, 36) : Number.NaN;
    // a list that shrank since the cursor was made ends early rather than failing
    if (Number.isSafeInteger(n) && n >= 0) return Math.min(n, limit);
  }
  throw invalidCursor(cursor);
}

const MARKED = "p2.";

/**
 * A cursor that names a place by a mark and a number (`s` 41: after the static numbered 41), so
 * that a list which changes between pages resumes where it left off rather than at a shifted index.
 * `mark` is one lowercase letter.
 */
export function encodeMarkedCursor(mark: string, n: number): string {
  return `${MARKED}${mark}.${n.toString(36)}`;
}

/** The mark (one of `marks`) and number of a cursor from {@link encodeMarkedCursor}; anything else is -32602. */
export function decodeMarkedCursor(cursor: unknown, marks: string): { mark: string; n: number } {
  if (
    typeof cursor === "string" &&
    cursor.length <= 20 &&
    cursor.startsWith(MARKED) &&
    cursor.charCodeAt(MARKED.length + 1) === 0x2e
  ) {
    const mark = cursor[MARKED.length]!;
    const digits = cursor.slice(MARKED.length + 2);
    const n = /^[0-9a-z]+$/.test(digits) ? Number.parseInt(digits, 36) : Number.NaN;
    if (marks.includes(mark) && Number.isSafeInteger(n)) return { mark, n };
  }
  throw invalidCursor(cursor);
}

function invalidCursor(cursor: unknown): McpError {
  return new McpError(ErrorCode.InvalidParams, "Invalid cursor", {
    cursor: typeof cursor === "string" ? cursor : null,
  });
}

/** A list result: one page of `items` under `key`, each mapped, plus `nextCursor` when there are more. */
export function listResult<T>(
  key: string,
  items: readonly T[],
  cursor: unknown,
  pageSize: number,
  map: (item: T) => object,
): { [key: string]: unknown } {
  const { page, nextCursor } = paginate(items, cursor, pageSize);
  const out: { [key: string]: unknown } = { [key]: page.map(map) };
  if (nextCursor !== undefined) out.nextCursor = nextCursor;
  return out;
}
