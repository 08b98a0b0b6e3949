import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import {
  assetEndpoint,
  createPageRenderer,
  languageEndpoint,
  loadPageAssets,
  type PageRenderer,
  pageModules,
  usableModules,
} from '../../http/pages/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import type { ModuleDirectory } from '../../kernel/module.ts';
import type { ModuleName } from '../../kernel/module-state.ts';
import { ApiError } from '../../platform/api-error.ts';
import type { MessageKey } from '../../platform/i18n/index.ts';

export const ASSET_PATH = '/account/assets';

const TokenParams = Type.Object({ token: Type.String({ pattern: '^[A-Za-z0-9_-]{1,512}$' }) });

/** A page fragment: one whose title message `page.<fragment>.title` English has (checked by the type). */
type Fragment = MessageKey extends infer K ? (K extends `page.${infer F}.title` ? F : never) : never;

interface PageDef {
  label: string;
  path: string;
  title: string;
  fragment: Fragment;
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
    // An invitation to an organization (docs/api.md §21): a signed-in person with the invited
    // address accepts; a new person chooses a password and gets the account.
    label: 'organization_join',
    path: '/account/organizations/join/:token',
    title: 'Join an organization',
    fragment: 'org-join',
    script: 'org-join.js',
    flow: 'organizations',
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
 * The `pages` module (docs/api.md §15): sign-in, /account and the page of each flow whose module is on.
 * Pages are plain HTML around ES modules in web/; every action is a call of the JSON API.
 */
export function pagesEndpoints(ctx: AppContext, modules: ModuleDirectory): Endpoint[] {
  const usable = pageModules(ctx, modules);
  const assets = loadPageAssets(ctx.config);
  const renderer: PageRenderer = createPageRenderer(ctx.config, assets, ASSET_PATH);
  return [
    assetEndpoint(assets, { group: 'pages', label: 'assets', path: ASSET_PATH }),
    languageEndpoint(ctx, { group: 'pages', path: '/account/language', home: '/account' }),
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
        // An HTML page, sent by the renderer.
        ownsReply: true,
        handler: (_req, reply) => {
          if (page.flow !== undefined && !usable(page.flow)) {
            throw ctx.modules.isEnabled(page.flow)
              ? new ApiError('not_found', { detail: `This service does not serve the ${page.flow} flow` })
              : new ApiError('module_disabled', { detail: `The ${page.flow} module is disabled` });
          }
          return renderer.send(reply, {
            ...page,
            titleKey: `page.${page.fragment}.title`,
            modules: usableModules(modules, usable),
            // /account's API keys offer expiries within API_KEY_MAX_TTL_DAYS (docs/api.md §22).
            ...(page.fragment === 'account'
              ? {
                  data: {
                    'key-max-days': String(ctx.config.apiKeys.maxTtlDays),
                    'key-no-expiry': String(ctx.config.apiKeys.allowNoExpiry),
                  },
                }
              : {}),
          });
        },
      }),
    ),
  ];
}
