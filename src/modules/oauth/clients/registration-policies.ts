import { type AdapterPayload, errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../../../kernel/context.types.ts';
import { sha256 } from '../server/adapter.ts';
import { checkRegisteredMetadata } from './registration.ts';
import { spendRegistrationToken } from './registration-tokens.queries.ts';

/** The registration policy every token made here carries: it registers one client, then is gone. */
export const SINGLE_USE = 'gatehouse_single_use';

/**
 * The library's registration policies (oidc-provider `features.registration.policies`), run after
 * the token was found and before the client is stored: the metadata is checked first (a refused
 * registration keeps its token), then the token is spent in one statement. Of two registrations
 * racing with one token, the second is refused `invalid_token` like an unknown one.
 */
export function registrationPolicies(ctx: AppContext) {
  return {
    [SINGLE_USE]: async (kctx: KoaContextWithOIDC, properties: AdapterPayload) => {
      checkRegisteredMetadata({ grant_types: ['authorization_code'], ...properties });
      const jti: unknown = kctx.oidc.entities.InitialAccessToken?.jti;
      const spent =
        typeof jti === 'string' && (await spendRegistrationToken(ctx.db, sha256(jti), Date.now()));
      if (!spent) throw new errors.InvalidToken('initial access token already used');
      // The library would copy the policy onto the client's registration access token, which an
      // instance in `open` mode (where policies cannot be configured) then fails to load for the
      // RFC 7592 read. The policy is about the initial token only: its successor carries none.
      const rat: { policies?: unknown } | undefined = kctx.oidc.entities.RegistrationAccessToken;
      if (rat) rat.policies = undefined;
    },
  };
}
