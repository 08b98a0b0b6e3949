// oidc-provider v9 ships no type declarations; this covers only what the test harness uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  import type { JWK } from 'jose';

  export interface AccountClaims {
    sub: string;
    [claim: string]: unknown;
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string): AccountClaims | Promise<AccountClaims>;
  }

  export interface ClientMetadata {
    client_id: string;
    client_secret?: string;
    redirect_uris: string[];
    post_logout_redirect_uris?: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
    id_token_signed_response_alg?: string;
  }

  export interface ErrorContext {
    type: string;
    body: unknown;
  }

  export interface Configuration {
    clients?: ClientMetadata[];
    jwks?: { keys: JWK[] };
    claims?: Record<string, string[] | null>;
    scopes?: string[];
    conformIdTokenClaims?: boolean;
    findAccount?: (ctx: unknown, sub: string) => Account | undefined | Promise<Account | undefined>;
    features?: Record<string, { enabled: boolean; [option: string]: unknown }>;
    ttl?: Record<string, number>;
    clientBasedCORS?: (ctx: unknown, origin: string, client: unknown) => boolean;
    renderError?: (ctx: ErrorContext, out: Record<string, string>, error: Error) => void | Promise<void>;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    urlFor(name: string, options?: Record<string, string>): string;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export default Provider;
}
