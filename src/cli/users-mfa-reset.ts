import { CliError, defineCommand } from './command.ts';
import { withDatabase } from './database.ts';

/**
 * `users mfa-reset --email E`: removes every second factor of the account (TOTP, passkeys, recovery
 * codes) and ends its sessions, as the admin's DELETE /users/<id>/mfa does, whichever modules are
 * on. The way out for an account refused with `second_factor_unavailable` (docs/api.md §16).
 */
export const usersMfaResetCommand = defineCommand({
  name: 'users mfa-reset',
  summary: "remove every second factor of the account and end its sessions (the admin's reset)",
  options: {
    email: { type: 'string', value: 'address', description: 'the account to reset', required: true },
  },
  async run({ values, config }) {
    const raw = values.email;
    if (typeof raw !== 'string' || raw === '') throw new CliError('users mfa-reset needs --email <address>');
    const { normalizeEmail } = await import('../identity/email.ts');
    const email = normalizeEmail(raw);
    if (email === null) throw new CliError(`"${raw}" is not a valid e-mail address`);
    await withDatabase(config, async (database) => {
      const { createLogger } = await import('../platform/logger.ts');
      const { closeContext, createContext } = await import('../kernel/context.ts');
      const { resetUserMfaByEmail } = await import('../modules/mfa/index.ts');
      const ctx = await createContext(config, database, createLogger('silent'));
      try {
        const done = await resetUserMfaByEmail(ctx, email);
        if (done === undefined) throw new CliError(`no user with the e-mail ${email}`);
        const totp = done.totpRemoved ? 'TOTP' : 'no TOTP';
        console.log(
          `reset ${email}: ${totp}, ${done.passkeysRemoved} passkey(s) and the recovery codes removed, sessions ended`,
        );
      } finally {
        await closeContext(ctx);
      }
    });
  },
});
