import { CliError, defineCommand } from './command.ts';
import { withDatabase } from './database.ts';

export const createAdminCommand = defineCommand({
  name: 'create-admin',
  summary: 'create an admin, or reset an existing account to admin with a new password',
  details:
    'The password comes from ADMIN_PASSWORD, or a prompt in a terminal. An existing account with\n' +
    'that address gets the new password and the admin role (the way back in when a password is lost).\n' +
    'When this makes another admin, the admin@example.com that the first start created is removed\n' +
    'if it never signed in.',
  options: {
    email: { type: 'string', value: 'address', description: "the admin's e-mail address", required: true },
  },
  // The serve-time rule that ADMIN_EMAIL and ADMIN_PASSWORD come as a pair must not refuse this
  // command, which names its admin with --email and takes ADMIN_PASSWORD on its own.
  configEnv: ({ ADMIN_EMAIL: _email, ADMIN_PASSWORD: _password, ...rest }) => rest,
  async run({ values, config, env }) {
    const email = values.email ?? '';
    const password = env.ADMIN_PASSWORD ? env.ADMIN_PASSWORD : await promptPassword();
    await withDatabase(config, async (database) => {
      const { createLogger } = await import('../platform/logger.ts');
      const log = createLogger('silent');
      const { closeContext, createContext } = await import('../kernel/context.ts');
      const { createOrPromoteAdmin, DEFAULT_ADMIN_EMAIL, removeUnusedFirstAdmin } = await import(
        '../modules/auth/index.ts'
      );
      const ctx = await createContext(config, database, log);
      try {
        const { checkPasswordPolicy } = await import('../identity/passwords/password-policy.ts');
        const policy = checkPasswordPolicy(password, {
          minLength: config.passwordMinLength,
          breachedCheck: config.passwordBreachedCheck,
          email,
        });
        if (!policy.ok) throw new CliError(`password refused: ${policy.reason}`);
        const id = await createOrPromoteAdmin(ctx, email, password, 'cli.create_admin');
        console.log(`admin ${email} ready (id ${id})`);
        if (await removeUnusedFirstAdmin(ctx, email)) {
          console.log(`removed ${DEFAULT_ADMIN_EMAIL}, the admin created at first start: it never signed in`);
        }
      } finally {
        await closeContext(ctx);
      }
    });
  },
});

async function promptPassword(): Promise<string> {
  if (!process.stdin.isTTY) throw new CliError('set ADMIN_PASSWORD or run in a terminal to be prompted');
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  try {
    return await rl.question('Password for the admin: ');
  } finally {
    rl.close();
  }
}
