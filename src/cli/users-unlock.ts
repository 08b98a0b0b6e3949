import { quoted } from '../platform/quoted.ts';
import { CliError, defineCommand } from './command.ts';
import { withDatabase } from './database.ts';

export const usersUnlockCommand = defineCommand({
  name: 'users unlock',
  summary: "clear an account's failed-login counts (a locked-out user can sign in again)",
  options: {
    email: { type: 'string', value: 'address', description: 'the account to unlock', required: true },
  },
  async run({ values, config }) {
    const raw = values.email;
    if (typeof raw !== 'string' || raw === '') throw new CliError('users unlock needs --email <address>');
    const { normalizeEmail } = await import('../identity/email.ts');
    const email = normalizeEmail(raw);
    if (email === null) throw new CliError(`${quoted(raw)} is not a valid e-mail address`);
    await withDatabase(config, async ({ db }) => {
      const { unlockUserByEmail } = await import('../modules/users/index.ts');
      const cleared = await unlockUserByEmail(db, email, {
        actor: { type: 'system' },
        client: { ip: null, userAgent: null },
      });
      if (cleared === undefined) throw new CliError(`no user with the e-mail ${email}`);
      console.log(`unlocked ${email} (${cleared} failed-login counter(s) cleared)`);
    });
  },
});
