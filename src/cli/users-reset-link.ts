import { CliError, defineCommand } from './command.ts';
import { withDatabase } from './database.ts';

/** `users reset-link --email E`: a recovery link for an operator on the server (docs/api.md §11; no mail is sent). */
export const usersResetLinkCommand = defineCommand({
  name: 'users reset-link',
  summary: 'print a one-time password reset link for the account (no mail is sent)',
  options: {
    email: { type: 'string', value: 'address', description: 'the account to recover', required: true },
  },
  async run({ values, config }) {
    const raw = values.email;
    if (typeof raw !== 'string' || raw === '') throw new CliError('users reset-link needs --email <address>');
    await withDatabase(config, async (database) => {
      const { createLogger } = await import('../platform/logger.ts');
      const { closeContext, createContext } = await import('../kernel/context.ts');
      const { cliResetLink } = await import('../modules/recovery/index.ts');
      const ctx = await createContext(config, database, createLogger('silent'));
      try {
        const link = await cliResetLink(ctx, raw).catch((err: unknown) => {
          throw new CliError(err instanceof Error ? err.message : String(err));
        });
        // The link alone on stdout (`link=$(gatehouse users reset-link …)`), its expiry on stderr.
        console.log(link.url);
        console.error(`works once, until ${link.expiresAt}`);
      } finally {
        await closeContext(ctx);
      }
    });
  },
});
