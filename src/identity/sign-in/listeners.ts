import type { Kysely, Transaction } from 'kysely';
import type { DB, Db, UserRow } from '../../platform/db/schema.ts';

/*
 * The one extension point of the sign-in pipeline (docs/architecture.md, "One way a session
 * opens"): features that must act on every sign-in, whatever the way in, register here from their
 * module's `start(ctx)` instead of hooking each way in. The identity core imports no feature: the
 * listeners come to it through the context (`ctx.signIn`).
 */

/** What a listener learns of a sign-in that opened a session. */
export interface SessionOpened {
  /** The account as the sign-in left it. */
  user: UserRow;
  sessionId: string;
  amr: readonly string[];
}

/**
 * Runs in the sign-in's transaction, after the session opened and before its audit entry: what it
 * writes commits with the sign-in or not at all, and an error it throws refuses the sign-in (so a
 * listener keeps to cheap, certain work).
 */
export type SessionOpenedListener = (
  trx: Kysely<DB> | Transaction<DB>,
  opened: SessionOpened,
) => Promise<void>;

/**
 * Who is about to sign in (or to be mailed a way in), for the address checks: the address, the
 * account when there is one, and the external provider the sign-in came through.
 */
export interface AddressCheck {
  /** Normalized (lower-cased) address: the one typed, or the account's. */
  email: string;
  /** The account holding the address, when there is one (its `role` decides exceptions). */
  user?: Pick<UserRow, 'role'> | null | undefined;
  /** The provider's name when the sign-in comes from an external provider (a SAML connection…). */
  provider?: string | null | undefined;
}

/**
 * Refuses an address before anything is sent or opened, by throwing an ApiError (the sso module's
 * 403 `sso_required`, docs/api.md §23); returns normally to let it pass. Reads through `db`, which
 * may be the sign-in's transaction.
 */
export type AddressCheckListener = (db: Db, check: AddressCheck) => Promise<void>;

/** The listeners of one app (`ctx.signIn`). */
export interface SignInListeners {
  /** Registers a listener (a module's `start(ctx)`); called in registration order. */
  onSessionOpened(listener: SessionOpenedListener): void;
  /** Called by the pipeline only (open-session.ts). */
  sessionOpened(trx: Kysely<DB> | Transaction<DB>, opened: SessionOpened): Promise<void>;
  /** Registers an address check (a module's `start(ctx)`). */
  onAddressCheck(listener: AddressCheckListener): void;
  /**
   * Runs every address check: signIn (sign-in.ts) for every way in, and the endpoints before a
   * sign-in (a mailed code or link, a reset, a sign-up) before they send or write anything.
   */
  checkAddress(db: Db, check: AddressCheck): Promise<void>;
}

export function createSignInListeners(): SignInListeners {
  const listeners: SessionOpenedListener[] = [];
  const checks: AddressCheckListener[] = [];
  return {
    onSessionOpened(listener) {
      listeners.push(listener);
    },
    async sessionOpened(trx, opened) {
      for (const listener of listeners) await listener(trx, opened);
    },
    onAddressCheck(listener) {
      checks.push(listener);
    },
    async checkAddress(db, check) {
      for (const listener of checks) await listener(db, check);
    },
  };
}
