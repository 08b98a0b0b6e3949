import { Type } from '@sinclair/typebox';
import type { AppContext } from '../context.ts';
import { ApiError } from '../errors.ts';
import { type Endpoint, endpoint } from '../modules/endpoint.ts';
import { MODULE_NAMES, type ModuleName } from '../modules/module-state.ts';
import { type Asset, loadPageAssets, type PageAssets } from './assets.ts';
import { createPageRenderer, type PageRenderer } from './shell.ts';

/** The registry's module catalog, as far as the pages read it (structural: no import of the registry). */
type ModuleCatalog = ReadonlyArray<{ readonly endpoints: readonly string[] }>;

export const ASSET_PATH = '/account/assets';

const TokenParams = Type.Object({ token: Type.String({ pattern: '^[A-Za-z0-9_-]{1,512}$' }) });
const AssetParams = Type.Object({
  version: Type.String({ pattern: '^[0-9a-f]{1,64}$' }),
  file: Type.String({ pattern: '^[a-z0-9-]{1,64}\\.(js|css|svg|png)$' }),
});

interface PageDef {
  label: string;
  path: string;
  title: string;
  fragment: string;
  script: string;
  /** The module whose API the page drives: while it is off, the page answers 404 (docs/api.md §15). */
  flow?: ModuleName;
  withToken?: boolean;
}

const PAGES: readonly PageDef[] = [
  { label: 'sign_in', path: '/account/sign-in', title: 'Sign in', fragment: 'sign-in', script: 'sign-in.js' },
  {
    // The link of a sign-in mail (docs/api.md §20): the sign-in page itself, which offers one button
    // for the token (a click signs in, loading does not) and continues with a second factor as after
    // a password.
    label: 'sign_in_email',
    path: '/account/sign-in/email/:token',
    title: 'Sign in',
    fragment: 'sign-in',
    script: 'sign-in.js',
    flow: 'passwordless',
    withToken: true,
  },
  { label: 'account', path: '/account', title: 'Your account', fragment: 'account', script: 'account.js' },
  {
    label: 'invitation',
    path: '/account/invitation/:token',
    title: 'Accept your invitation',
    fragment: 'invitation',
    script: 'invitation.js',
    flow: 'invitations',
    withToken: true,
  },
  {
    label: 'sign_up',
    path: '/account/sign-up',
    title: 'Create an account',
    fragment: 'sign-up',
    script: 'sign-up.js',
    flow: 'registration',
  },
  {
    label: 'forgot_password',
    path: '/account/forgot-password',
    title: 'Forgot your password',
    fragment: 'forgot-password',
    script: 'forgot-password.js',
    flow: 'recovery',
  },
  {
    label: 'reset_password',
    path: '/account/reset-password/:token',
    title: 'Choose a new password',
    fragment: 'reset-password',
    script: 'reset-password.js',
    flow: 'recovery',
    withToken: true,
  },
  {
    label: 'verify_email',
    path: '/account/verify-email/:token',
    title: 'Confirm your e-mail address',
    fragment: 'verify-email',
    script: 'verify-email.js',
    flow: 'email',
    withToken: true,
  },
];

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
};

/** Which modules the pages may use now (enabled and served), for the page scripts and the flow pages. */
export function pageModules(ctx: AppContext, catalog: () => ModuleCatalog): (name: ModuleName) => boolean {
  let served: Set<string> | undefined;
  return (name) => {
    if (!ctx.modules.isEnabled(name)) return false;
    const needed = NEEDS[name];
    if (needed === undefined) return true;
    // The endpoints are fixed once the app is built: read them on first use.
    served ??= new Set(catalog().flatMap((m) => m.endpoints));
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

/**
 * The `pages` module (docs/api.md §15): sign-in, /account and the page of each flow whose module is on.
 * Pages are plain HTML around ES modules in web/; every action is a call of the JSON API.
 */
export function pagesEndpoints(ctx: AppContext, catalog: () => ModuleCatalog): Endpoint[] {
  const usable = pageModules(ctx, catalog);
  const assets = loadPageAssets(ctx.config);
  const renderer: PageRenderer = createPageRenderer(ctx.config, assets, ASSET_PATH);
  return [
    assetEndpoint(assets, { group: 'pages', label: 'assets', path: ASSET_PATH }),
    ...PAGES.map((page) =>
      endpoint({
        group: 'pages',
        label: page.label,
        method: 'GET',
        path: page.path,
        access: 'public',
        hidden: true,
        summary: page.title,
        schema: page.withToken ? { hide: true, params: TokenParams } : { hide: true },
        handler: (_req, reply) => {
          if (page.flow !== undefined && !usable(page.flow)) {
            throw ctx.modules.isEnabled(page.flow)
              ? new ApiError('not_found', { detail: `This service does not serve the ${page.flow} flow` })
              : new ApiError('module_disabled', { detail: `The ${page.flow} module is disabled` });
          }
          return renderer.send(reply, { ...page, modules: MODULE_NAMES.filter(usable) });
        },
      }),
    ),
  ];
}
