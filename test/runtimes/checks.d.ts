/** Runs every runtime check against `handle`; `origin` is the URL the requests name. */
export function runChecks(handle: (request: Request) => Promise<Response>, origin?: string): Promise<void>;
