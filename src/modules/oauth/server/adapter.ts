import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { type Adapter, type AdapterPayload, errors } from 'oidc-provider';
import { groupCommit } from '../../../platform/db/group-commit.ts';
import type { DB } from '../../../platform/db/schema.ts';
import {
  consumeModel,
  deleteAllModelsOfGrant,
  deleteModel,
  deleteModelsOfGrant,
  findModel,
  findModelBy,
  findModelGrantId,
  type ModelRow,
  upsertModel,
} from './models.queries.ts';

export const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/** Where the provider's `Client` model comes from and goes to: Gatehouse's own client table. */
export interface ClientSource {
  find(clientId: string): Promise<AdapterPayload | undefined>;
  /** A client registered through RFC 7591. */
  register(clientId: string, metadata: AdapterPayload): Promise<void>;
}

/** What the adapter asks about sessions. */
export interface SessionLiveness {
  /** A grant lives while its Gatehouse session does (the grant's id is the session's). */
  grantLive(grantId: string): Promise<boolean>;
  /** The library revoked a grant (logout, a reused refresh token, RFC 7009): its session ends. */
  grantEnded(grantId: string): Promise<void>;
  /** A browser session lives while the Gatehouse session of its sign-in does. */
  browserLive(uidHash: string): Promise<boolean>;
}

/**
 * oidc-provider's storage on Kysely, for both engines (docs/api.md §17, "Storage"). Every model is
 * stored under the SHA-256 of its id, and the id (`jti`) is removed from the stored payload: a
 * database dump holds no token, code or session id that works. `find` puts the id back, since the
 * caller presented it. Clients are not stored here: they live in `oauth_clients`.
 * Grants are found, and browser sessions read as signed in, only while their Gatehouse session lives
 * (grant-sessions.ts).
 */
export function adapterFactory(db: Kysely<DB>, clients: ClientSource, sessions: SessionLiveness) {
  // A token request saves up to three models (the used refresh token, the new one, the access
  // token), each once; concurrent requests' saves share a commit on SQLite (group-commit.ts).
  const write = groupCommit(db);
  return class ModelAdapter implements Adapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
      if (this.model === 'Client') return clients.register(id, payload);
      const { jti: _id, ...stored } = payload;
      const row = {
        model: this.model,
        id_hash: sha256(id),
        payload: JSON.stringify(stored),
        grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
        account_id: typeof payload.accountId === 'string' ? payload.accountId : null,
        client_id: typeof payload.clientId === 'string' ? payload.clientId : null,
        uid_hash: typeof payload.uid === 'string' ? sha256(payload.uid) : null,
        user_code_hash: typeof payload.userCode === 'string' ? sha256(payload.userCode) : null,
        expires_at: expiresIn ? Date.now() + expiresIn * 1000 : null,
      };
      await write((db) => upsertModel(db, row));
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === 'Client') return clients.find(id);
      if (this.model === 'Grant' && !(await sessions.grantLive(id))) return undefined;
      return this.alive(await findModel(db, this.model, sha256(id)), id);
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      // The id is not known here (only its hash is stored): the library only reads such a model.
      // Not checked for liveness: the library asks by uid whether a pending interaction's browser
      // session still exists, and a sign-in that ended (the hosted page signs out and in again for
      // `prompt=login`) must be able to finish it; tokens of an ended sign-in end with their grant.
      return revive(await findModelBy(db, this.model, 'uid_hash', sha256(uid)), undefined);
    }

    /**
     * A browser session is signed in only while the Gatehouse session of its sign-in lives: after
     * that it reads as signed out (same uid, no account, no authorizations), so the next request
     * asks for a sign-in and `prompt=none` answers `login_required`.
     */
    private async alive(row: ModelRow | undefined, id: string | undefined) {
      const payload = revive(row, id);
      if (this.model !== 'Session' || payload?.accountId === undefined) return payload;
      const uidHash = row?.uid_hash ?? null;
      if (uidHash !== null && (await sessions.browserLive(uidHash))) return payload;
      const {
        accountId: _a,
        loginTs: _l,
        amr: _m,
        acr: _c,
        authorizations: _z,
        transient: _t,
        ...signedOut
      } = payload;
      return signedOut;
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return revive(await findModelBy(db, this.model, 'user_code_hash', sha256(userCode)), undefined);
    }

    /**
     * The library reads a code or refresh token, checks it unused, then consumes it: two requests
     * presenting it at once could both pass that check. Consuming is atomic here instead, and the
     * one that loses is treated as the library treats a reuse it sees (docs/api.md §17: "presenting
     * a rotated one revokes the grant"): the grant ends, and the request fails with invalid_grant.
     */
    async consume(id: string): Promise<void> {
      const [model, idHash, now] = [this.model, sha256(id), Date.now()];
      if (await write((db) => consumeModel(db, model, idHash, now))) return;
      const grantId = await findModelGrantId(db, model, idHash);
      if (grantId !== null) {
        await write((db) => deleteAllModelsOfGrant(db, grantId));
        await new ModelAdapter('Grant').destroy(grantId);
      }
      throw new errors.InvalidGrant(`${USED[model] ?? 'grant'} already used`);
    }

    // Through the same queue as the saves, so a deletion never lands before a save issued earlier.
    async destroy(id: string): Promise<void> {
      const [model, idHash] = [this.model, sha256(id)];
      await write((db) => deleteModel(db, model, idHash));
      if (this.model === 'Grant') await sessions.grantEnded(id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const model = this.model;
      await write((db) => deleteModelsOfGrant(db, model, grantId));
    }
  };
}

/** How a refused reuse names what was presented twice. */
const USED: Record<string, string> = {
  AuthorizationCode: 'authorization code',
  RefreshToken: 'refresh token',
};

function revive(row: ModelRow | undefined, id: string | undefined): AdapterPayload | undefined {
  if (!row) return undefined;
  if (row.expires_at !== null && Number(row.expires_at) <= Date.now()) return undefined;
  const payload = JSON.parse(row.payload) as AdapterPayload;
  if (id !== undefined) payload.jti = id;
  if (row.consumed_at !== null) payload.consumed = Math.floor(Number(row.consumed_at) / 1000);
  return payload;
}
