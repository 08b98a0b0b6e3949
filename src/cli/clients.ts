import { CliError, defineCommand } from './command.ts';
import { withContext } from './database.ts';

const listOf = (value: string | undefined) =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

/** Turns the service's 400/404 answers into one line. */
async function asCli<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const { ApiError } = await import('../platform/api-error.ts');
    if (err instanceof ApiError) throw new CliError(err.detail ?? err.code);
    throw err;
  }
}

export const clientsCreateCommand = defineCommand({
  name: 'clients create',
  summary: 'register an OAuth client (docs/oauth.md); a confidential client’s secret is printed once',
  options: {
    name: {
      type: 'string',
      value: 'name',
      description: 'the name people see on the consent page',
      required: true,
    },
    type: { type: 'string', value: 'confidential|public', description: 'default confidential' },
    'application-type': { type: 'string', value: 'web|native', description: 'default web' },
    'redirect-uris': { type: 'string', value: 'uri,…', description: 'exact redirect URIs, comma-separated' },
    'post-logout-redirect-uris': { type: 'string', value: 'uri,…', description: 'after RP-initiated logout' },
    'grant-types': {
      type: 'string',
      value: 'grant,…',
      description: 'authorization_code, refresh_token, client_credentials',
    },
    scopes: { type: 'string', value: 'scope,…', description: 'OpenID and API scopes it may ask for' },
    resources: { type: 'string', value: 'uri,…', description: 'API identifiers it may ask tokens for' },
    'first-party': { type: 'boolean', description: 'never shows a consent page' },
    'pkce-optional': {
      type: 'boolean',
      description: 'confidential only: may sign in without PKCE, a nonce then required (pkce_required false)',
    },
  },
  async run({ values, config }) {
    await withContext(config, async (ctx) => {
      const { createClient } = await import('../modules/oauth/index.ts');
      const type = values.type;
      if (type !== undefined && type !== 'confidential' && type !== 'public') {
        throw new CliError('--type must be confidential or public');
      }
      const appType = values['application-type'];
      if (appType !== undefined && appType !== 'web' && appType !== 'native') {
        throw new CliError('--application-type must be web or native');
      }
      const created = await asCli(() =>
        createClient(ctx, {
          name: values.name as string,
          ...(type ? { type } : {}),
          ...(appType ? { application_type: appType } : {}),
          ...(values['redirect-uris'] ? { redirect_uris: listOf(values['redirect-uris']) } : {}),
          ...(values['post-logout-redirect-uris']
            ? { post_logout_redirect_uris: listOf(values['post-logout-redirect-uris']) }
            : {}),
          ...(values['grant-types']
            ? { grant_types: listOf(values['grant-types']) as Array<'authorization_code'> }
            : {}),
          ...(values.scopes ? { scopes: listOf(values.scopes) } : {}),
          ...(values.resources ? { resources: listOf(values.resources) } : {}),
          ...(values['first-party'] ? { first_party: true } : {}),
          ...(values['pkce-optional'] ? { pkce_required: false } : {}),
        }),
      );
      console.log(`client_id ${created.client_id}`);
      if (created.client_secret) console.log(`client_secret ${created.client_secret} (shown once)`);
    });
  },
});

export const clientsListCommand = defineCommand({
  name: 'clients list',
  summary: 'list the OAuth clients: id, type, first-party, name',
  async run({ config }) {
    await withContext(config, async (ctx) => {
      const { listClients } = await import('../modules/oauth/index.ts');
      const { data } = await listClients(ctx);
      for (const c of data) {
        console.log(`${c.client_id}\t${c.type}\t${c.first_party ? 'first-party' : 'third-party'}\t${c.name}`);
      }
      if (data.length === 0) console.log('no clients');
    });
  },
});

export const clientsUpdateCommand = defineCommand({
  name: 'clients update',
  summary: 'change an OAuth client (only the options given); the type and the secret stay',
  positionals: [{ name: 'client_id', description: 'the client to change', required: true }],
  options: {
    name: { type: 'string', value: 'name', description: 'the name people see on the consent page' },
    'application-type': { type: 'string', value: 'web|native', description: 'web or native' },
    'redirect-uris': { type: 'string', value: 'uri,…', description: 'replaces the redirect URIs' },
    'post-logout-redirect-uris': { type: 'string', value: 'uri,…', description: 'replaces them' },
    'grant-types': { type: 'string', value: 'grant,…', description: 'replaces the grant types' },
    scopes: { type: 'string', value: 'scope,…', description: 'replaces the scopes' },
    resources: { type: 'string', value: 'uri,…', description: 'replaces the API identifiers' },
    'first-party': { type: 'boolean', description: 'never shows a consent page' },
    'third-party': { type: 'boolean', description: 'asks for consent again' },
    'pkce-optional': {
      type: 'boolean',
      description: 'confidential only: may sign in without PKCE, a nonce then required (pkce_required false)',
    },
    'pkce-required': { type: 'boolean', description: 'every sign-in needs PKCE again (pkce_required true)' },
  },
  async run({ positionals, values, config }) {
    const clientId = positionals[0] as string;
    const appType = values['application-type'];
    if (appType !== undefined && appType !== 'web' && appType !== 'native') {
      throw new CliError('--application-type must be web or native');
    }
    if (values['first-party'] && values['third-party']) {
      throw new CliError('--first-party and --third-party exclude each other');
    }
    if (values['pkce-optional'] && values['pkce-required']) {
      throw new CliError('--pkce-optional and --pkce-required exclude each other');
    }
    const changes = {
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(appType ? { application_type: appType as 'web' | 'native' } : {}),
      ...(values['redirect-uris'] !== undefined ? { redirect_uris: listOf(values['redirect-uris']) } : {}),
      ...(values['post-logout-redirect-uris'] !== undefined
        ? { post_logout_redirect_uris: listOf(values['post-logout-redirect-uris']) }
        : {}),
      ...(values['grant-types'] !== undefined
        ? { grant_types: listOf(values['grant-types']) as Array<'authorization_code'> }
        : {}),
      ...(values.scopes !== undefined ? { scopes: listOf(values.scopes) } : {}),
      ...(values.resources !== undefined ? { resources: listOf(values.resources) } : {}),
      ...(values['first-party'] ? { first_party: true } : {}),
      ...(values['third-party'] ? { first_party: false } : {}),
      ...(values['pkce-optional'] ? { pkce_required: false } : {}),
      ...(values['pkce-required'] ? { pkce_required: true } : {}),
    };
    if (Object.keys(changes).length === 0) {
      throw new CliError('nothing to change: give at least one option (gatehouse clients update --help)');
    }
    await withContext(config, async (ctx) => {
      const { updateClient } = await import('../modules/oauth/index.ts');
      // The admin API's PUT /api/v1/clients/<id>: the same checks of every field.
      const c = await asCli(() => updateClient(ctx, clientId, changes));
      console.log(`updated client ${c.client_id}: ${c.name}`);
      console.log(`redirect_uris ${c.redirect_uris.join(' ') || '(none)'}`);
      console.log(`grant_types ${c.grant_types.join(' ')}; scopes ${c.scopes.join(' ')}`);
      console.log(`pkce_required ${c.pkce_required}`);
    });
  },
});

export const clientsDeleteCommand = defineCommand({
  name: 'clients delete',
  summary: 'remove an OAuth client',
  positionals: [{ name: 'client_id', description: 'the client to remove', required: true }],
  async run({ positionals, config }) {
    const clientId = positionals[0] as string;
    await withContext(config, async (ctx) => {
      const { deleteClient } = await import('../modules/oauth/index.ts');
      await asCli(() => deleteClient(ctx, clientId));
      console.log(`deleted client ${clientId}`);
    });
  },
});

export const clientsRegistrationTokenCommand = defineCommand({
  name: 'clients registration-token',
  summary:
    'an initial access token for dynamic registration (OAUTH_DYNAMIC_REGISTRATION=token), printed once',
  options: {
    ttl: { type: 'string', value: 'seconds', description: 'how long it may be used (default 86400)' },
  },
  async run({ values, config }) {
    // One implementation with the admin API (POST /api/v1/clients/registration-tokens): the mode,
    // the bounds, the audit entry (actor: system) are the service's.
    const ttl = values.ttl === undefined ? undefined : Number(values.ttl);
    await withContext(config, async (ctx) => {
      const { createAuthorizationServer, createRegistrationToken } = await import(
        '../modules/oauth/index.ts'
      );
      // The library's InitialAccessToken model: the command runs without an app (no module is started),
      // so it makes the one authorization server of its process here, once.
      const server = createAuthorizationServer(ctx);
      const made = await asCli(() =>
        createRegistrationToken(ctx, server, ttl, { actor: { type: 'system' }, client: null }),
      );
      console.log(`${made.token}`);
      console.log(`(shown once; registers one client; valid until ${made.expires_at}; stored hashed)`);
    });
  },
});
