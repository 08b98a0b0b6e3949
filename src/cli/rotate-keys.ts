import { defineCommand } from './command.ts';
import { withDatabase } from './database.ts';

export const rotateKeysCommand = defineCommand({
  name: 'rotate-keys',
  summary: 'add a new access-token signing key; old keys verify until their tokens expire',
  async run({ config }) {
    const { recordAudit } = await import('../modules/audit/audit.queries.ts');
    const { rotateSigningKey } = await import('../security/signing-keys.ts');
    await withDatabase(config, async ({ db }) => {
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
