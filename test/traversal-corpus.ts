/**
 * Path traversal attempts, written as they appear in a URI (percent-encoding included), for any test
 * that puts a URI variable near a file system: append `raw` where a variable goes, match, and check that
 * an `unsafe` entry never yields a value that `isUnsafePathValue` accepts (it may also not match, or
 * throw `McpError(InvalidParams)` for a malformed escape), and that a safe one is not flagged.
 */
export interface TraversalCase {
  /** The text to put in the URI where the variable goes. */
  readonly raw: string;
  /** Whether it must be stopped before it reaches a handler. */
  readonly unsafe: boolean;
  /** What it tries. */
  readonly why: string;
}

export const traversalCorpus: readonly TraversalCase[] = [
  { raw: "..", unsafe: true, why: "the parent directory" },
  { raw: "../etc/passwd", unsafe: true, why: "climbs out" },
  { raw: "../../../../../../etc/passwd", unsafe: true, why: "climbs far out" },
  { raw: "a/../../b", unsafe: true, why: "dips in, then climbs out" },
  { raw: "a/./../../b", unsafe: true, why: "with a '.' on the way" },
  { raw: "%2e%2e", unsafe: true, why: "encoded dots" },
  { raw: "%2E%2E%2Fetc%2Fpasswd", unsafe: true, why: "encoded dots and slashes" },
  { raw: "..%2F..%2Fetc", unsafe: true, why: "encoded slashes" },
  { raw: ".%2e/x", unsafe: true, why: "one dot encoded" },
  { raw: "%2e./x", unsafe: true, why: "the other dot encoded" },
  { raw: "..%5C..%5Cwindows", unsafe: true, why: "encoded backslashes" },
  { raw: "..\\..\\windows", unsafe: true, why: "raw backslashes" },
  { raw: "a%5C..%5C..%5Cb", unsafe: true, why: "backslash traversal inside a name" },
  { raw: "/etc/passwd", unsafe: true, why: "an absolute path" },
  { raw: "%2Fetc%2Fpasswd", unsafe: true, why: "an encoded absolute path" },
  { raw: "%5C%5Cserver%5Cshare", unsafe: true, why: "a UNC path" },
  { raw: "C:%5Cwindows", unsafe: true, why: "a drive letter and backslash" },
  { raw: "c:/windows", unsafe: true, why: "a drive letter and slash" },
  { raw: "C%3A", unsafe: true, why: "an encoded bare drive" },
  { raw: "a%00.txt", unsafe: true, why: "a NUL byte truncates the name in C APIs" },
  { raw: "%00", unsafe: true, why: "a lone NUL" },
  { raw: "%c0%ae%c0%ae", unsafe: true, why: "overlong UTF-8 dots (malformed: must throw, not decode)" },
  { raw: "..%c0%af", unsafe: true, why: "an overlong UTF-8 slash (malformed)" },
  {
    raw: "%252e%252e%252f",
    unsafe: false,
    why: "double-encoded: decodes once to the literal name %2e%2e%2f",
  },
  { raw: "%252e%252e", unsafe: false, why: "double-encoded dots: the literal name %2e%2e" },
  { raw: "a/../b", unsafe: false, why: "dips in and out, stays inside" },
  { raw: "notes.txt", unsafe: false, why: "a plain name" },
  { raw: "..notes", unsafe: false, why: "a name that starts with dots" },
  { raw: "a%2Fb", unsafe: false, why: "an encoded slash between two names" },
  { raw: "dir/sub/file.md", unsafe: false, why: "a relative path" },
  { raw: "caf%C3%A9", unsafe: false, why: "non-ASCII" },
];
