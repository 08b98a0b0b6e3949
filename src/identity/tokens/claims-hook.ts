import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../../kernel/context.types.ts';
import { ApiError } from '../../platform/api-error.ts';
import { RESERVED_CLAIMS } from '../../platform/config/token-hook.ts';
import { createDeliveryAgents, type DeliveryAgents } from '../../platform/outbound/address-guard.ts';
import { postJson } from '../../platform/outbound/http-post.ts';
import { signedHeaders } from '../../platform/outbound/standard-webhooks.ts';
import { type PublicUser, toPublicUser } from '../user.schemas.ts';

/*
 * The claims hook of docs/api.md §21 (docs/claims-hook.md): before a user's access or ID token is
 * signed, Gatehouse asks the team's own service for extra claims, a Standard Webhooks call that may
 * add claims but never change the ones Gatehouse vouches for. No admin-supplied code runs inside
 * Gatehouse: the hook is someone else's HTTP service, reached through the webhooks' SSRF-guarded
 * agents (src/platform/outbound/).
 */

/** The claims an answer may not set (§21); kept beside the setting that checks names against them. */
export { RESERVED_CLAIMS };

/** The largest answer read (§21: more is a failure). */
export const CLAIMS_HOOK_MAX_ANSWER_BYTES = 4096;

/** What one token is about to be: the call's `data` (§21). */
export interface ClaimsHookRequest {
  token: 'access_token' | 'id_token';
  /** The §5 public user object (never a hash or secret). */
  user: PublicUser;
  /** The OAuth client the token is for; null for Gatehouse's own tokens. */
  clientId: string | null;
  /** The token's audience as one string (an ID token's is the client_id). */
  audience: string;
  /** The organization the token is for (organization tokens), with the user's roles there. */
  organization: { id: string; slug: string; roles: readonly string[] } | null;
  /** Every claim as it will be signed. */
  claims: Readonly<Record<string, unknown>>;
}

/** Why a call failed, as the warning names it (never the answer's text, the URL or the secret). */
export type ClaimsHookFailure =
  | 'address_refused'
  | 'timeout'
  | 'network_error'
  | 'status'
  | 'empty_body'
  | 'not_json_object'
  | 'too_large'
  | 'reserved_claim';

/** A failed call, thrown inside and turned into the failure mode's answer by callClaimsHook. */
class HookFailed extends Error {
  readonly reason: ClaimsHookFailure;
  readonly extra: Record<string, unknown>;
  constructor(reason: ClaimsHookFailure, extra: Record<string, unknown> = {}) {
    super(reason);
    this.reason = reason;
    this.extra = extra;
  }
}

const agentsByMode = new Map<boolean, DeliveryAgents>();
function agents(allowPrivate: boolean): DeliveryAgents {
  let found = agentsByMode.get(allowPrivate);
  if (!found) {
    found = createDeliveryAgents(allowPrivate);
    agentsByMode.set(allowPrivate, found);
  }
  return found;
}

/**
 * The claims to merge into the token about to be signed: {} when no hook is configured, the
 * answer's `claims` when the hook answered well, and on a failure {} (TOKEN_HOOK_FAILURE=allow, a
 * warning logged) or the 503 `token_hook_failed` ApiError (deny, the default): the caller then
 * issues nothing and must not have consumed anything it cannot give back (a rolled-back
 * transaction, or a call made before the refresh token is used).
 */
export async function callClaimsHook(
  ctx: Pick<AppContext, 'config' | 'log'>,
  request: ClaimsHookRequest,
): Promise<Record<string, unknown>> {
  const hook = ctx.config.tokenHook;
  if (hook === null) return {};
  const started = Date.now();
  try {
    return await callOnce(ctx, request);
  } catch (err) {
    if (!(err instanceof HookFailed)) throw err;
    const fields = {
      reason: err.reason,
      ...err.extra,
      token: request.token,
      client_id: request.clientId,
      user_id: request.user.id,
      duration_ms: Date.now() - started,
    };
    if (hook.failure === 'allow') {
      ctx.log.warn(
        fields,
        'claims hook failed: token issued without extra claims (TOKEN_HOOK_FAILURE=allow)',
      );
      return {};
    }
    ctx.log.warn(fields, 'claims hook failed: no token issued (TOKEN_HOOK_FAILURE=deny)');
    throw new ApiError('token_hook_failed', {
      detail: 'The token could not be issued because the claims hook did not answer usably; try again later',
    });
  }
}

async function callOnce(
  ctx: Pick<AppContext, 'config' | 'log'>,
  request: ClaimsHookRequest,
): Promise<Record<string, unknown>> {
  const hook = ctx.config.tokenHook;
  if (hook === null) return {};
  const at = new Date();
  const body = JSON.stringify({
    type: 'token.claims',
    timestamp: at.toISOString(),
    data: {
      token: request.token,
      user: request.user,
      client_id: request.clientId,
      audience: request.audience,
      organization: request.organization,
      claims: request.claims,
    },
  });
  const outcome = await postJson(
    agents(ctx.config.webhooks.allowPrivate),
    hook.url,
    signedHeaders(`msg_${uuidv7()}`, body, [hook.secret], at),
    body,
    hook.timeoutMs,
    { keepBody: CLAIMS_HOOK_MAX_ANSWER_BYTES, userAgent: 'Gatehouse-ClaimsHook/1' },
  );
  if ('error' in outcome) {
    if (outcome.error === 'address_refused' || outcome.error === 'timeout')
      throw new HookFailed(outcome.error);
    throw new HookFailed('network_error', { error: outcome.error });
  }
  if (outcome.status < 200 || outcome.status > 299)
    throw new HookFailed('status', { status: outcome.status });
  if (outcome.tooLarge) throw new HookFailed('too_large');
  const text = outcome.body?.toString('utf8') ?? '';
  if (text.trim() === '') throw new HookFailed('empty_body');
  return extraClaims(text, request.claims);
}

/**
 * The answer's `claims`, checked: a JSON object whose `claims` (when present) is one too, setting no
 * reserved claim and none the token already carries (Gatehouse's `role`, say: the hook adds, it
 * never rewrites what Gatehouse vouches for).
 */
function extraClaims(text: string, signed: Readonly<Record<string, unknown>>): Record<string, unknown> {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new HookFailed('not_json_object');
  }
  if (!isPlainObject(answer)) throw new HookFailed('not_json_object');
  const claims = answer.claims;
  if (claims === undefined) return {};
  if (!isPlainObject(claims)) throw new HookFailed('not_json_object');
  const reserved = Object.keys(claims).filter(
    (name) => RESERVED_CLAIMS.has(name) || Object.hasOwn(signed, name),
  );
  // The names are the receiver's own words; they are Gatehouse's reserved names, so safe to log.
  if (reserved.length > 0) throw new HookFailed('reserved_claim', { claims: reserved });
  return { ...claims };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The claims hook of a Gatehouse access token (docs/api.md §5) for `user`: what `accessTokens.sign`
 * takes as its extra claims. No OAuth client is involved (`client_id` null); no organization yet.
 */
export function gatehouseAccessTokenHook(
  ctx: Pick<AppContext, 'config' | 'log'>,
  user: Parameters<typeof toPublicUser>[0],
): ((claims: Readonly<Record<string, unknown>>) => Promise<Record<string, unknown>>) | undefined {
  if (ctx.config.tokenHook === null) return undefined;
  return (claims) =>
    callClaimsHook(ctx, {
      token: 'access_token',
      user: toPublicUser(user),
      clientId: null,
      audience: String(claims.aud),
      organization: null,
      claims,
    });
}
