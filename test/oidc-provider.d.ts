// The little of oidc-provider (which ships no types) that the upstream sign-in tests use.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export interface ProviderClient {
    grantTypeAllowed(grant: string): boolean;
  }

  export interface Account {
    accountId: string;
    claims(): Promise<{ sub: string; [claim: string]: unknown }>;
  }

  export interface Configuration {
    clients?: { [field: string]: unknown }[];
    features?: { [feature: string]: { enabled: boolean; [option: string]: unknown } };
    pkce?: { required?: () => boolean };
    issueRefreshToken?: (ctx: unknown, client: ProviderClient) => Promise<boolean>;
    claims?: { [scope: string]: string[] };
    findAccount?: (ctx: unknown, sub: string) => Promise<Account | undefined>;
    cookies?: { keys: string[] };
    ttl?: { [artifact: string]: number };
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: "server_error", listener: (ctx: unknown, error: Error) => void): this;
  }
}
