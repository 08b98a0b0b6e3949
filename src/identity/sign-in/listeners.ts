import type { Kysely, Transaction } from 'kysely';
import type { DB, UserRow } from '../../platform/db/schema.ts';

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

/** The listeners of one app (`ctx.signIn`). */
export interface SignInListeners {
  /** Registers a listener (a module's `start(ctx)`); called in registration order. */
  onSessionOpened(listener: SessionOpenedListener): void;
  /** Called by the pipeline only (open-session.ts). */
  sessionOpened(trx: Kysely<DB> | Transaction<DB>, opened: SessionOpened): Promise<void>;
}

export function createSignInListeners(): SignInListeners {
  const listeners: SessionOpenedListener[] = [];
  return {
    onSessionOpened(listener) {
      listeners.push(listener);
    },
    async sessionOpened(trx, opened) {
      for (const listener of listeners) await listener(trx, opened);
    },
  };
}
