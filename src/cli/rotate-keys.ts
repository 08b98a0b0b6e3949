import { CliError, defineCommand } from './command.ts';
import { withDatabase } from './database.ts';

export const rotateKeysCommand = defineCommand({
  name: 'rotate-keys',
  summary: 'add a new access-token signing key; old keys verify until their tokens expire',
  details: [
    'With --revoke <kid> (a compromised key): the key is revoked at once instead. Tokens it signed',
    'stop verifying and it leaves /.well-known/jwks.json on every instance within 2 seconds; a key',
    'that still signs is replaced by a new key of its algorithm in the same step. Sessions survive:',
    'clients get new tokens with their refresh tokens (docs/operations.md).',
  ].join('\n'),
  options: {
    revoke: {
      type: 'string',
      value: 'kid',
      description: 'revoke this key now (its kid, as in the token header and the JWKS)',
    },
  },
  async run({ config, values }) {
    const { recordAudit } = await import('../identity/audit.queries.ts');
    const { revokeSigningKey, rotateSigningKey } = await import('../identity/tokens/signing-keys.ts');
    const revoke = values.revoke;
    await withDatabase(config, async ({ db }) => {
      if (revoke !== undefined) {
        const outcome = await db.transaction().execute(async (trx) => {
          const result = await revokeSigningKey(trx, revoke);
          if (result.status !== 'revoked') return result;
          await recordAudit(trx, {
            action: 'keys.revoke',
            actor: { type: 'system' },
            target: { type: 'signing_key', id: revoke },
            details: { via: 'cli', ...(result.replacement ? { replacement: result.replacement } : {}) },
          });
          return result;
        });
        if (outcome.status === 'unknown') throw new CliError(`no signing key has kid ${revoke}`);
        if (outcome.status === 'already') {
          console.log(`signing key ${revoke} was already revoked`);
          return;
        }
        const successor = outcome.replacement
          ? `; new ${outcome.alg} signing key ${outcome.replacement} signs instead`
          : '';
        console.log(
          `revoked signing key ${revoke}${successor}; its tokens stop verifying on every instance within 2 s`,
        );
        return;
      }
      const kid = await db.transaction().execute(async (trx) => {
        const newKid = await rotateSigningKey(trx, config.accessTokenAlg);
        await recordAudit(trx, {
          action: 'keys.rotate',
          actor: { type: 'system' },
          target: { type: 'signing_key', id: newKid },
          details: { via: 'cli' },
        });
        return newKid;
      });
      console.log(`new signing key ${kid}; instances pick it up within a minute, old keys keep verifying`);
    });
  },
});
