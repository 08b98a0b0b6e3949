/** docs/api.md §2: forms A and B as the seed specified; `FULL` (`API_FORM=full`) turns every optional module on but `registration`. */
export type ApiForm = 'A' | 'B' | 'FULL';
/** REQUIRE_MFA (docs/mfa.md): whose sign-ins need a second factor before a full session opens. */
export type RequireMfa = 'off' | 'admins' | 'all';

/** Validated, frozen configuration: docs/api.md §10 plus the operational settings documented in docs/configuration.md. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  /** PostgreSQL session connection for LISTEN/NOTIFY; null: polling only (DATABASE_LISTEN_URL=off). */
  readonly databaseListenUrl: string | null;
  readonly databasePoolMax: number;
  readonly databaseStatementTimeoutMs: number;
  /** PostgreSQL: sessions whose rows the guard keeps in memory (src/identity/tokens/session-cache.ts); 0: none. */
  readonly sessionCacheSize: number;
  readonly apiForm: ApiForm;
  readonly publicUrl: string;
  /** Whether PUBLIC_URL was given (the default names one port, so instances would disagree). */
  readonly publicUrlSet: boolean;
  readonly adminEmail: string | null;
  readonly adminPassword: string | null;
  readonly accessTokenTtlS: number;
  /** Signing algorithm of new access tokens (docs/api.md §14); every loaded key of any of them verifies. */
  readonly accessTokenAlg: 'ES256' | 'RS256' | 'EdDSA';
  /** The tokens' `client_id` claim (RFC 9068); defaults to the audience. */
  readonly accessTokenClientId: string;
  /** Verified access tokens remembered until their exp (0: off; bench A/B, docs/benchmarks.md). */
  readonly verifiedTokenCacheSize: number;
  /** Live sessions one user may hold; a sign-in at the cap ends that user's oldest (docs/auth.md). */
  readonly sessionsPerUserMax: number;
  readonly refreshTokenTtlS: number;
  readonly refreshReuseGraceS: number;
  /** Absolute session lifetime: refreshes slide a session's expiry, but never past login + this. */
  readonly sessionMaxLifetimeS: number;
  /**
   * Inactivity timeout (SESSION_IDLE_TIMEOUT_S, docs/security.md): a session not used (no sign-in,
   * no refresh) for this long ends. null: not set, the refresh token's lifetime bounds it.
   */
  readonly sessionIdleTimeoutS: number | null;
  /** REQUIRE_MFA: `off` (default), `admins` or `all`. */
  readonly requireMfa: RequireMfa;
  readonly invitationTtlS: number;
  readonly inviteUrlTemplate: string;
  /** ORG_INVITE_URL_TEMPLATE: the link of an invitation to an organization (docs/organizations.md). */
  readonly orgInviteUrlTemplate: string;
  readonly passwordMinLength: number;
  /** New passwords also checked against the breached-password filter (docs/security.md). */
  readonly passwordBreachedCheck: boolean;
  /** docs/api.md §11–12: link lifetimes, link templates (must contain `{token}`), the sign-in rule, the mails' product name. */
  readonly passwordResetTtlS: number;
  readonly emailLinkTtlS: number;
  /** docs/api.md §20: how long an e-mail sign-in link and its code work (EMAIL_SIGNIN_TTL_S). */
  readonly emailSigninTtlS: number;
  readonly requireVerifiedEmail: boolean;
  readonly resetUrlTemplate: string;
  readonly verifyEmailUrlTemplate: string;
  readonly appName: string;
  /** DEFAULT_LOCALE (docs/languages.md): the language when a request names none served; canonical BCP 47. */
  readonly defaultLocale: string;
  /** LOCALES_DIR: operator catalogs merged over the built-in ones, checked at start; null: none. */
  readonly localesDir: string | null;
  readonly loginFailuresPerAddressPerMin: number;
  /** Password hashes running at once (null: the libuv threadpool size) and allowed to wait. */
  readonly passwordHashConcurrency: number | null;
  readonly passwordHashQueue: number | null;
  readonly oidc: {
    readonly issuer: string | null;
    readonly clientId: string | null;
    /** OIDC_CLIENT_SECRET: the `default` provider's redirect flow (docs/api.md §18); null: a public client. */
    readonly clientSecret: string | null;
    readonly allowedAlgs: readonly string[];
    readonly autoProvision: boolean;
    readonly linkByEmail: boolean;
    /** Whether an unknown identity may link by e-mail to an admin account (docs/api.md §16; default false). */
    readonly linkAdmins: boolean;
    /** How long the discovery document and the key set are reused before a refetch. */
    readonly cacheTtlS: number;
    /** Minimum time between key set refetches triggered by an unknown `kid`. */
    readonly jwksCooldownS: number;
    /** Timeout of each request to the provider. */
    readonly httpTimeoutMs: number;
    /** Oldest `iat` accepted: an ID token is exchanged right after it is issued (a captured token has a short life even without a nonce). */
    readonly maxTokenAgeS: number;
  };
  readonly smtpUrl: string | null;
  /** PEM certificates (SMTP_CA_FILE) trusted for the SMTP server's TLS, instead of the public CAs. */
  readonly smtpCa: string | null;
  readonly mailFrom: string;
  readonly mailMaxAttempts: number;
  readonly mailRetryBaseS: number;
  readonly corsOrigins: readonly string[];
  /**
   * Whose X-Forwarded-For to believe: false (nobody), true (every hop: the left-most address, which a
   * client can forge when the proxy appends), or a comma list of proxy addresses/CIDRs for Fastify.
   */
  readonly trustProxy: boolean | string;
  readonly logLevel: string;
  readonly metricsToken: string | null;
  /** Hosted pages' branding (docs/pages.md): an optional logo (https URL or a path) and accent colour. */
  readonly pages: { readonly logoUrl: string | null; readonly accentColor: string | null };
  /** `METRICS_PUBLIC=true`: serve `/metrics` without a token (docs/api.md §10). */
  readonly metricsPublic: boolean;
  readonly auditRetentionDays: number;
  /** Slow clients: a whole request must arrive within requestTimeoutMs, its headers within headersTimeoutMs. */
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  /** Nice value for libuv's pool threads, where argon2 runs (Linux; 0 leaves them alone). */
  readonly workerNice: number;
  /** SECRETS_KEY (base64 of 32 bytes) that seals TOTP secrets; null: see src/identity/tokens/secrets-key.ts. */
  readonly secretsKey: string | null;
  /** docs/api.md §19: `http` endpoints (WEBHOOK_ALLOW_HTTP) and private addresses (WEBHOOK_ALLOW_PRIVATE, tests). */
  readonly webhooks: { readonly allowHttp: boolean; readonly allowPrivate: boolean };
  /** docs/api.md §21: the claims hook (TOKEN_HOOK_*), null when TOKEN_HOOK_URL is not set. */
  readonly tokenHook: TokenHookSettings | null;
  /** docs/api.md §22: API_KEY_MAX_TTL_DAYS, API_KEY_ALLOW_NO_EXPIRY. */
  readonly apiKeys: { readonly maxTtlDays: number; readonly allowNoExpiry: boolean };
  /** The authorization server (docs/api.md §17, docs/oauth.md). */
  readonly oauth: {
    /** OAUTH_DYNAMIC_REGISTRATION: RFC 7591 registration off, with an initial access token, or open. */
    readonly dynamicRegistration: 'off' | 'token' | 'open';
    readonly registrationsPerAddressPerHour: number;
  };
  /** docs/api.md §21, docs/organizations.md. */
  readonly organizations: {
    /** ORGANIZATIONS_SELF_SERVICE: any active user may create an organization (and joins it). */
    readonly selfService: boolean;
    /** ORGANIZATIONS_CREATOR_ROLES: the roles a self-service creator gets there (default `owner`). */
    readonly creatorRoles: readonly string[];
  };
  /** docs/api.md §13: relying party of passkeys. Whether the RP ID may be used is checked when `passkeys` is on. */
  readonly webauthn: {
    readonly rpId: string;
    readonly rpName: string;
    readonly origins: readonly string[];
  };
  /** Load shedding (docs/benchmarks.md): over any limit, requests other than /health get 503. 0 = off. */
  readonly pressure: {
    readonly maxEventLoopDelayMs: number;
    /** null: 90% of the V8 heap limit. */
    readonly maxHeapUsedMb: number | null;
    readonly maxRssMb: number;
  };
}

/** The claims hook's settings (src/platform/config/token-hook.ts, docs/claims-hook.md). */
export interface TokenHookSettings {
  readonly url: string;
  /** `whsec_…`, the Standard Webhooks secret the calls are signed with. */
  readonly secret: string;
  readonly timeoutMs: number;
  /** What a failed call does: `deny` issues nothing (503), `allow` issues without extra claims. */
  readonly failure: 'deny' | 'allow';
  /**
   * TOKEN_HOOK_ID_TOKEN_CLAIMS: the claim names the hook may add to the authorization server's ID
   * tokens, declared under its `openid` scope so the library releases them (docs/claims-hook.md).
   */
  readonly idTokenClaims: readonly string[];
}
