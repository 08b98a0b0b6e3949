import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import type { ModuleName } from '../../kernel/module-state.ts';
import { ApiError } from '../../platform/api-error.ts';
import { type Endpoint, endpoint } from '../endpoint.ts';
import type { Asset, PageAssets } from './assets.ts';

const AssetParams = Type.Object({
  version: Type.String({ pattern: '^[0-9a-f]{1,64}$' }),
  file: Type.String({ pattern: '^[a-z0-9-]{1,64}\\.(js|css|svg|png)$' }),
});

/**
 * The endpoint each flow's page and section drives. A module counts for the pages only while it is
 * on AND this build serves that endpoint: a module declared before its API is built shows nothing.
 */
const NEEDS: Partial<Record<ModuleName, string>> = {
  account: 'PUT /api/v1/change-password',
  invitations: 'POST /api/v1/invite/<token>/set-password',
  recovery: 'POST /api/v1/password/reset/<token>',
  registration: 'POST /api/v1/signup',
  email: 'POST /api/v1/email/verify/<token>',
  mfa: 'POST /api/v1/login/mfa',
  passkeys: 'POST /api/v1/login/passkey',
  sessions: 'GET /api/v1/sessions',
  providers: 'GET /api/v1/idp/<name>/start',
  passwordless: 'POST /api/v1/login/email/verify',
  organizations: 'POST /api/v1/organization-invitations/<token>/accept',
};

/** Which modules the pages may use now (enabled and served), for the page scripts and the flow pages. */
export function pageModules(ctx: AppContext, modules: ModuleDirectory): (name: ModuleName) => boolean {
  let served: Set<string> | undefined;
  return (name) => {
    if (!ctx.modules.isEnabled(name)) return false;
    const needed = NEEDS[name];
    if (needed === undefined) return true;
    // The endpoints are fixed once the app is built: read them on first use.
    served ??= new Set(modules.catalog().flatMap((m) => m.endpoints));
    return served.has(needed);
  };
}

/** `GET <path>/:version/:file`: the current release's files, cached for a year; an old version is 404. */
export function assetEndpoint(
  assets: PageAssets,
  def: { group: string; label: string; path: string },
): Endpoint {
  return endpoint({
    ...def,
    method: 'GET',
    path: `${def.path}/:version/:file`,
    access: 'public',
    hidden: true,
    summary: 'Static files of the hosted pages',
    schema: { hide: true, params: AssetParams },
    // A static file: its own content type, ETag and 304.
    ownsReply: true,
    handler: (req, reply) => {
      const asset: Asset | undefined =
        req.params.version === assets.version ? assets.get(req.params.file) : undefined;
      if (asset === undefined) throw new ApiError('not_found', { detail: 'No such file' });
      reply
        .header('content-type', asset.type)
        .header('etag', asset.etag)
        .header('cache-control', 'public, max-age=31536000, immutable');
      if (req.headers['if-none-match'] === asset.etag) return reply.status(304).send();
      return reply.send(asset.body);
    },
  });
}

/** The modules the page scripts may use now, in module order (the names are read once). */
export function usableModules(modules: ModuleDirectory, usable: (name: ModuleName) => boolean): ModuleName[] {
  let names = NAMES.get(modules);
  if (names === undefined) {
    names = modules.catalog().map((m) => m.name);
    NAMES.set(modules, names);
  }
  return names.filter(usable);
}

const NAMES = new WeakMap<ModuleDirectory, ModuleName[]>();
