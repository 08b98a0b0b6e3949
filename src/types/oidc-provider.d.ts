// oidc-provider v9 ships no type declarations; this covers what Gatehouse (src/modules/oauth/) and
// the test harness (test/support/oidc-provider.ts) use. Moved here from test/support so the build
// (tsconfig.build.json: src only) sees it too.
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
    redirect_uris?: string[];
    post_logout_redirect_uris?: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
    id_token_signed_response_alg?: string;
    [property: string]: unknown;
  }

  export interface ErrorContext {
    type: string;
    body: unknown;
  }

  export type AdapterPayload = Record<string, unknown> & {
    jti?: string;
    grantId?: string;
    uid?: string;
    userCode?: string;
    consumed?: number;
  };

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  /** What the library hands to configuration callbacks: a Koa context with `oidc`. */
  export interface KoaContextWithOIDC {
    // biome-ignore lint/suspicious/noExplicitAny: the library's context is untyped
    oidc: any;
    // biome-ignore lint/suspicious/noExplicitAny: the library's context is untyped
    [key: string]: any;
  }

  export interface Configuration {
    // biome-ignore lint/suspicious/noExplicitAny: the library's configuration is wide; see its docs
    [option: string]: any;
    clients?: ClientMetadata[];
    jwks?: { keys: JWK[] };
    claims?: Record<string, string[] | null>;
    scopes?: string[];
    conformIdTokenClaims?: boolean;
    findAccount?: (
      ctx: KoaContextWithOIDC,
      sub: string,
      token?: { grantId?: string },
    ) => Account | undefined | Promise<Account | undefined>;
    features?: Record<string, { enabled: boolean; [option: string]: unknown }>;
    ttl?: Record<string, number | ((...args: never[]) => number)>;
    clientBasedCORS?: (ctx: unknown, origin: string, client: unknown) => boolean;
    renderError?: (ctx: ErrorContext, out: Record<string, string>, error: Error) => void | Promise<void>;
  }

  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId: string; uid: string };
    grantId?: string;
    lastSubmission?: Record<string, unknown>;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    /** Koa's `use`: pre- and post-middlewares around the library's routes. */
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): this;
    urlFor(name: string, options?: Record<string, string>): string;
    on(event: string, listener: (...args: unknown[]) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
    // biome-ignore lint/suspicious/noExplicitAny: model classes are untyped
    readonly Grant: any;
    // biome-ignore lint/suspicious/noExplicitAny: model classes are untyped
    readonly Client: any;
    // biome-ignore lint/suspicious/noExplicitAny: model classes are untyped
    readonly InitialAccessToken: any;
    // biome-ignore lint/suspicious/noExplicitAny: model classes are untyped
    readonly RefreshToken: any;
  }

  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    InvalidScope: new (description?: string, scope?: string) => Error;
    InvalidClientMetadata: new (description?: string) => Error;
    InvalidRequest: new (description?: string) => Error;
    InvalidToken: new (detail?: string) => Error;
    AccessDenied: new (description?: string) => Error;
    InvalidGrant: new (detail?: string) => Error;
  };

  export const interactionPolicy: {
    // biome-ignore lint/suspicious/noExplicitAny: the policy's prompts and checks are untyped
    base(): any;
    Check: new (
      reason: string,
      description: string,
      error: string,
      check: (ctx: KoaContextWithOIDC) => boolean | Promise<boolean>,
    ) => unknown;
    /** A prompt of its own (the library's `interactionPolicy.Prompt`), added to the policy with `add`. */
    Prompt: new (
      options: { name: string; requestable: boolean },
      ...checks: unknown[]
    ) => unknown;
  };

  export default Provider;
}
