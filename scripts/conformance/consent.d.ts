// Types of consent.js, for the tests that import it.

export interface ParsedForm {
  method: string;
  action: string;
  fields: [string, string][];
  submits: { name?: string; value: string; label: string }[];
}

export interface FollowOptions {
  /** The client's redirect URI: following stops at the first redirect to it (not fetched). */
  redirectUri: string;
  /** Cookies sent to every origin (the person's session), besides those the pages set. */
  cookies?: Record<string, string>;
  /** What the person answers on the consent page. Default "approve". */
  decision?: "approve" | "deny";
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Requests at most. Default 10. */
  maxSteps?: number;
  /** Receives every page read. */
  pages?: { url: string; status: number; html: string }[];
}

export function decodeHtml(text: string): string;
export function parseForms(html: string, pageUrl: string): ParsedForm[];
export function chooseSubmit(
  forms: ParsedForm[],
  decision?: "approve" | "deny",
): { form: ParsedForm; submit: ParsedForm["submits"][number] } | undefined;
export function followAuthorization(authorizationUrl: string | URL, options: FollowOptions): Promise<URL>;
