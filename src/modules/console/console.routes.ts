import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { requireAuth } from '../../http/guard.ts';
import {
  assetEndpoint,
  createPageRenderer,
  languageEndpoint,
  loadPageAssets,
  pageModules,
  usableModules,
} from '../../http/pages/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import { linkedIdentities } from '../account/index.ts';
import { getUser, IdParams } from '../users/index.ts';

export const CONSOLE_ASSET_PATH = '/admin/assets';

const IdentityList = Type.Object({
  data: Type.Array(
    Type.Object({
      issuer: Type.String(),
      subject: Type.String(),
      linked_at: Type.String({ format: 'date-time' }),
    }),
  ),
});

/**
 * The `console` module (docs/api.md §15, docs/console.md): the admin console at /admin, its own asset
 * route (so it works with `pages` off), and the one read the JSON API lacks for it — a user's linked
 * identities. Everything else the console shows or changes goes through the documented endpoints.
 * All are hidden: the module list shows `console` with `endpoints: []` and the forms' index stays exact.
 */
export function consoleEndpoints(ctx: AppContext, modules: ModuleDirectory): Endpoint[] {
  const usable = pageModules(ctx, modules);
  const assets = loadPageAssets(ctx.config);
  const renderer = createPageRenderer(ctx.config, assets, CONSOLE_ASSET_PATH, '/admin/language');
  return [
    assetEndpoint(assets, { group: 'console', label: 'assets', path: CONSOLE_ASSET_PATH }),
    languageEndpoint(ctx, { group: 'console', path: '/admin/language', home: '/admin' }),
    endpoint({
      group: 'console',
      label: 'admin',
      method: 'GET',
      path: '/admin',
      access: 'public',
      hidden: true,
      summary: 'Admin console',
      // The page holds no data: it signs in through the API and asks it for everything (admin only).
      schema: { hide: true },
      ownsReply: true,
      handler: (_req, reply) =>
        renderer.send(reply, {
          title: 'Admin console',
          titleKey: 'page.admin.title',
          fragment: 'admin',
          script: 'admin.js',
          stylesheet: 'admin.css',
          modules: usableModules(modules, usable),
          // The dynamic-registration card shows the real state. Not a secret: discovery already
          // says whether registration is on (`registration_endpoint`).
          // The API keys view offers expiries within API_KEY_MAX_TTL_DAYS (docs/api.md §22): a
          // policy, not a secret (an over-long expiry is refused with that number anyway).
          data: {
            registration: ctx.config.oauth.dynamicRegistration,
            'key-max-days': String(ctx.config.apiKeys.maxTtlDays),
            'key-no-expiry': String(ctx.config.apiKeys.allowNoExpiry),
          },
        }),
    }),
    endpoint({
      group: 'console',
      label: 'user_identities',
      method: 'GET',
      path: '/api/v1/users/:id/identities',
      access: 'admin',
      hidden: true,
      summary: "A user's linked identities (issuer, subject), oldest first",
      schema: { hide: true, params: IdParams, response: { 200: IdentityList } },
      handler: async (req) => {
        // getUser answers 404 for an unknown or malformed id, exactly like GET /users/<id>.
        const user = await getUser(ctx, requireAuth(req).user, req.params.id);
        return { data: await linkedIdentities(ctx, user.id) };
      },
    }),
  ];
}
