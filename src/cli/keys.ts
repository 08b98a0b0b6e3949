import type { AppContext } from '../kernel/context.types.ts';
import type { ModuleDirectory } from '../kernel/module.ts';
import type { Config } from '../platform/config.ts';
import { CliError, defineCommand } from './command.ts';
import { withDatabase } from './database.ts';

/*
 * `gatehouse keys create|list|revoke` (docs/api-keys.md): bootstrapping automation on a fresh
 * install, through the same service functions as the API (the same scope, expiry and limit rules).
 */

/** The CLI acts as the system (docs/operations.md, audit entries). */
const SYSTEM = { actor: { type: 'system' as const }, client: null };

/** Runs `fn` on a context and the module directory; an API error becomes its one-line detail. */
async function withKeys(config: Config, fn: (ctx: AppContext, directory: ModuleDirectory) => Promise<void>) {
  await withDatabase(config, async (database) => {
    const { createLogger } = await import('../platform/logger.ts');
    const { closeContext, createContext } = await import('../kernel/context.ts');
    const { loadModules } = await import('../kernel/registry.ts');
    const { ApiError } = await import('../platform/api-error.ts');
    const ctx = await createContext(config, database, createLogger('silent'));
    try {
      const loaded = loadModules(ctx);
      const directory: ModuleDirectory = {
        catalog: () =>
          loaded.map(({ info, endpoints }) => ({
            name: info.name,
            required: info.required,
            description: info.description,
            endpoints: [],
            groups: [...new Set(endpoints.filter((e) => !e.hidden).map((e) => e.group))],
          })),
        unavailable: () => null,
        // Keys need no other module's state; nothing here asks for one.
        offer: () => {
          throw new Error('the keys command offers no module state');
        },
      };
      await fn(ctx, directory);
    } catch (err) {
      if (err instanceof ApiError) throw new CliError(err.detail ?? err.code);
      throw err;
    } finally {
      await closeContext(ctx);
    }
  });
}

export const keysCreateCommand = defineCommand({
  name: 'keys create',
  summary: 'create an API key (for a user, or a new service account) and print it (shown this once)',
  options: {
    name: { type: 'string', value: 'text', description: "the key's name", required: true },
    'user-id': { type: 'string', value: 'id', description: 'the owner: an existing user or service account' },
    email: { type: 'string', value: 'address', description: 'the owner: the user with this address' },
    'service-account': {
      type: 'string',
      value: 'name',
      description: 'the owner: a new service account of this name',
    },
    role: {
      type: 'string',
      value: 'admin|user',
      description: "the new service account's role (default user)",
    },
    scopes: {
      type: 'string',
      value: 'list',
      description: 'comma list, e.g. users:read,users:write (default: all the owner may do)',
    },
    'expires-days': {
      type: 'string',
      value: 'n',
      description: 'days until it expires (default API_KEY_MAX_TTL_DAYS)',
    },
  },
  async run({ values, config }) {
    const owners = [values['user-id'], values.email, values['service-account']].filter(
      (v) => v !== undefined,
    );
    if (owners.length !== 1)
      throw new CliError('name the owner with one of --user-id, --email, --service-account');
    const role = values.role ?? 'user';
    if (role !== 'admin' && role !== 'user') throw new CliError('--role must be admin or user');
    const days = values['expires-days'] === undefined ? undefined : Number(values['expires-days']);
    if (days !== undefined && !(Number.isInteger(days) && days > 0)) {
      throw new CliError('--expires-days must be a whole number of days above 0');
    }
    await withKeys(config, async (ctx, directory) => {
      const { createKey, createServiceAccount } = await import('../modules/api-keys/index.ts');
      const { findUserByEmail, normalizeEmail } = await import('../identity/index.ts');
      let userId = values['user-id'];
      if (values.email !== undefined) {
        const email = normalizeEmail(values.email);
        const user = email === null ? undefined : await findUserByEmail(ctx.db, email);
        if (!user) throw new CliError(`no user with the address ${values.email}`);
        userId = user.id;
      }
      if (values['service-account'] !== undefined) {
        const account = await createServiceAccount(ctx, { name: values['service-account'], role }, SYSTEM);
        console.log(`service account ${account.id} ${account.name} (${account.role})`);
        userId = account.id;
      }
      const scopes = values.scopes
        ?.split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      const created = await createKey(
        ctx,
        directory,
        null,
        {
          name: values.name ?? '',
          user_id: userId!,
          ...(scopes !== undefined && { scopes }),
          ...(days !== undefined && { expires_at: new Date(Date.now() + days * 86_400_000).toISOString() }),
        },
        SYSTEM,
      );
      console.log(`key ${created.id} ${created.prefix}… expires ${created.expires_at ?? 'never'}`);
      console.log(created.key);
      if (!ctx.modules.isEnabled('api_keys')) {
        console.log(
          'note: the api_keys module is off; keys authenticate once it is on (gatehouse modules enable api_keys)',
        );
      }
    });
  },
});

export const keysListCommand = defineCommand({
  name: 'keys list',
  summary: 'list the live and expired API keys (id, prefix, owner, expiry, scopes), newest first',
  options: {
    owner: { type: 'string', value: 'user:<id>|organization:<id>', description: "only this owner's keys" },
  },
  async run({ values, config }) {
    await withKeys(config, async (ctx) => {
      const { listKeys } = await import('../modules/api-keys/index.ts');
      let cursor: string | undefined;
      let n = 0;
      do {
        const page = await listKeys(ctx, null, {
          limit: 100,
          ...(cursor !== undefined && { cursor }),
          ...(values.owner !== undefined && { owner: values.owner }),
        });
        for (const k of page.data) {
          n++;
          const scopes = k.scopes === null ? '(owner)' : k.scopes.join(',');
          console.log(
            `${k.id}  ${k.prefix}  ${k.owner.type}:${k.owner.id}  ${k.expires_at ?? 'never'}  ${scopes}  ${k.name}`,
          );
        }
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
      if (n === 0) console.log('no API keys');
    });
  },
});

export const keysRevokeCommand = defineCommand({
  name: 'keys revoke',
  summary: 'revoke an API key (every instance refuses it from the next request)',
  options: { id: { type: 'string', value: 'id', description: 'the key', required: true } },
  async run({ values, config }) {
    await withKeys(config, async (ctx) => {
      const { revokeKey } = await import('../modules/api-keys/index.ts');
      await revokeKey(ctx, null, String(values.id), SYSTEM);
      console.log(`revoked ${values.id}`);
    });
  },
});
