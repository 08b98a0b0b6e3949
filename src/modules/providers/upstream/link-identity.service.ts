import type { Kysely } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import {
  findIdentity,
  findUserByEmail,
  findUserById,
  insertIdentity,
  normalizeEmail,
  recordAudit,
} from '../../../identity/index.ts';
import { isUniqueViolation } from '../../../platform/db/dialect.ts';
import type { DB } from '../../../platform/db/schema.ts';

/** A refusal of `gatehouse users link-identity`, said in one line. */
export class LinkIdentityError extends Error {}

export interface OperatorLink {
  email: string;
  issuer: string;
  subject: string;
}

/**
 * `gatehouse users link-identity --email E --issuer I --subject S` (docs/api.md §16): the operator
 * links a provider identity to an account that the automatic rules will not link by e-mail (an admin,
 * an unproven address). The operator vouches, so none of those rules apply; the issuer must be a
 * configured provider's, exactly (`iss` is compared byte for byte, so a typo would link nothing that
 * can ever sign in). Audited as `identity.link` by the system, `by: "operator"`. Linking the same
 * identity to the same account again changes nothing; an identity linked to another account is
 * refused (unlink it there first).
 */
export async function linkIdentityByOperator(
  db: Kysely<DB>,
  input: OperatorLink,
  configuredIssuers: readonly string[],
): Promise<{ linked: boolean; email: string }> {
  const email = normalizeEmail(input.email);
  if (email === null) throw new LinkIdentityError(`"${input.email}" is not a valid e-mail address`);
  if (!configuredIssuers.includes(input.issuer)) {
    throw new LinkIdentityError(
      configuredIssuers.length === 0
        ? 'no identity provider is configured (OIDC_ISSUER, OIDC_CLIENT_ID)'
        : `--issuer must be a configured provider's issuer, exactly: ${configuredIssuers.join(', ')}`,
    );
  }
  const subject = input.subject;
  if (subject.length === 0 || subject.length > 255 || /[\p{Cc}]/u.test(subject)) {
    throw new LinkIdentityError('--subject must be 1 to 255 characters without control characters');
  }
  try {
    return await db.transaction().execute(async (trx) => {
      const user = await findUserByEmail(trx, email);
      if (!user) throw new LinkIdentityError(`no user with the e-mail ${email}`);
      const existing = await findIdentity(trx, input.issuer, subject);
      if (existing) {
        if (existing.user_id === user.id) return { linked: false, email };
        const other = await findUserById(trx, existing.user_id);
        throw new LinkIdentityError(
          `this identity is already linked to another account (${other?.email ?? existing.user_id})`,
        );
      }
      const id = uuidv7();
      await insertIdentity(trx, {
        id,
        user_id: user.id,
        issuer: input.issuer,
        subject,
        // The address the provider reports is learnt at the identity's first sign-in.
        email: null,
        linked_at: Date.now(),
      });
      await recordAudit(trx, {
        action: 'identity.link',
        actor: { type: 'system' },
        target: { type: 'identity', id },
        details: {
          issuer: input.issuer,
          subject,
          user_id: user.id,
          by: 'operator',
          via: 'cli.link_identity',
        },
      });
      return { linked: true, email };
    });
  } catch (err) {
    // Someone linked the same identity meanwhile.
    if (isUniqueViolation(err))
      throw new LinkIdentityError('this identity was linked meanwhile; run the command again');
    throw err;
  }
}
