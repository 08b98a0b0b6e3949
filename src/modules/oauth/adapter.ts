import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { Db } from '../../db/schema.ts';
import {
  consumeModel,
  deleteModel,
  deleteModelsOfGrant,
  findModel,
  findModelBy,
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

/**
 * oidc-provider's storage on Kysely, for both engines (docs/api.md §17, "Storage"). Every model is
 * stored under the SHA-256 of its id, and the id (`jti`) is removed from the stored payload: a
 * database dump holds no token, code or session id that works. `find` puts the id back, since the
 * caller presented it. Clients are not stored here: they live in `oauth_clients`.
 */
export function adapterFactory(db: Db, clients: ClientSource) {
  return class ModelAdapter implements Adapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
      if (this.model === 'Client') return clients.register(id, payload);
      const { jti: _id, ...stored } = payload;
      await upsertModel(db, {
        model: this.model,
        id_hash: sha256(id),
        payload: JSON.stringify(stored),
        grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
        account_id: typeof payload.accountId === 'string' ? payload.accountId : null,
        client_id: typeof payload.clientId === 'string' ? payload.clientId : null,
        uid_hash: typeof payload.uid === 'string' ? sha256(payload.uid) : null,
        user_code_hash: typeof payload.userCode === 'string' ? sha256(payload.userCode) : null,
        expires_at: expiresIn ? Date.now() + expiresIn * 1000 : null,
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === 'Client') return clients.find(id);
      return revive(await findModel(db, this.model, sha256(id)), id);
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      // The id is not known here (only its hash is stored): the library only reads such a model.
      return revive(await findModelBy(db, this.model, 'uid_hash', sha256(uid)), undefined);
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return revive(await findModelBy(db, this.model, 'user_code_hash', sha256(userCode)), undefined);
    }

    async consume(id: string): Promise<void> {
      await consumeModel(db, this.model, sha256(id), Date.now());
    }

    async destroy(id: string): Promise<void> {
      await deleteModel(db, this.model, sha256(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await deleteModelsOfGrant(db, this.model, grantId);
    }
  };
}

function revive(row: ModelRow | undefined, id: string | undefined): AdapterPayload | undefined {
  if (!row) return undefined;
  if (row.expires_at !== null && Number(row.expires_at) <= Date.now()) return undefined;
  const payload = JSON.parse(row.payload) as AdapterPayload;
  if (id !== undefined) payload.jti = id;
  if (row.consumed_at !== null) payload.consumed = Math.floor(Number(row.consumed_at) / 1000);
  return payload;
}
