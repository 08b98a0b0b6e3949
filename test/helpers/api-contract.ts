/**
 * The index and module tables of docs/api.md §2–3, written out by hand from the contract. Tests compare
 * the service against these whole: they are the contract's text, never derived from the code.
 */

export type Documentation = Record<string, Record<string, string>>;

/** docs/api.md §3, form A, exactly as printed there. */
export const FORM_A_DOCUMENTATION: Documentation = {
  admin: { modules: 'GET /api/v1/admin/modules', module_toggle: 'PUT /api/v1/admin/modules/<name>' },
  auth: {
    login: 'POST /api/v1/login',
    logout: 'POST /api/v1/logout',
    refresh_token: 'POST /api/v1/refresh-token',
    verify_token: 'GET /api/v1/verify-token',
    change_password: 'PUT /api/v1/change-password',
    profile: 'GET /api/v1/profile',
  },
  core: { health: 'GET /api/v1/core/health' },
  health: { basic: 'GET /health', detailed: 'GET /health/detailed' },
  idp: { config: 'GET /api/v1/idp/config', verify: 'POST /api/v1/idp/verify' },
  users: {
    list: 'GET /api/v1/users',
    search: 'GET /api/v1/users/search',
    stats: 'GET /api/v1/users/stats',
    get: 'GET /api/v1/users/<id>',
    update: 'PUT /api/v1/users/<id>',
    create: 'POST /api/v1/users',
    delete: 'DELETE /api/v1/users/<id>',
  },
};

/**
 * docs/api.md §3, form B: no `idp` group, no auth.change_password, auth.profile, users.create,
 * users.delete; adds auth.invite, auth.invite_set_password and users.invite.
 */
export const FORM_B_DOCUMENTATION: Documentation = {
  admin: { modules: 'GET /api/v1/admin/modules', module_toggle: 'PUT /api/v1/admin/modules/<name>' },
  auth: {
    login: 'POST /api/v1/login',
    logout: 'POST /api/v1/logout',
    refresh_token: 'POST /api/v1/refresh-token',
    verify_token: 'GET /api/v1/verify-token',
    invite: 'GET /api/v1/invite/<token>',
    invite_set_password: 'POST /api/v1/invite/<token>/set-password',
  },
  core: { health: 'GET /api/v1/core/health' },
  health: { basic: 'GET /health', detailed: 'GET /health/detailed' },
  users: {
    list: 'GET /api/v1/users',
    search: 'GET /api/v1/users/search',
    stats: 'GET /api/v1/users/stats',
    get: 'GET /api/v1/users/<id>',
    update: 'PUT /api/v1/users/<id>',
    invite: 'POST /api/v1/users/invite',
  },
};

/** docs/api.md §2: the modules in order, whether required, and their endpoints as `group.label`. */
export const MODULES: ReadonlyArray<{ name: string; required: boolean; endpoints: readonly string[] }> = [
  { name: 'core', required: true, endpoints: ['core.health'] },
  { name: 'health', required: true, endpoints: ['health.basic', 'health.detailed'] },
  { name: 'admin', required: true, endpoints: ['admin.modules', 'admin.module_toggle'] },
  {
    name: 'auth',
    required: true,
    endpoints: ['auth.login', 'auth.logout', 'auth.refresh_token', 'auth.verify_token'],
  },
  {
    name: 'users',
    required: true,
    endpoints: ['users.list', 'users.search', 'users.stats', 'users.get', 'users.update'],
  },
  { name: 'account', required: false, endpoints: ['auth.change_password', 'auth.profile'] },
  { name: 'user_admin', required: false, endpoints: ['users.create', 'users.delete'] },
  { name: 'idp', required: false, endpoints: ['idp.config', 'idp.verify'] },
  {
    name: 'invitations',
    required: false,
    endpoints: ['auth.invite', 'auth.invite_set_password', 'users.invite'],
  },
];

/**
 * Optional modules added after the nine of docs/api.md §2: they come after them, start disabled in both
 * forms and leave both forms' index exactly as §3 shows.
 */
export const LATER_MODULES: readonly string[] = [
  'audit',
  'recovery',
  'email',
  'registration',
  'mfa',
  'passkeys',
  'sessions',
  'oauth',
  'providers',
  'webhooks',
  'passwordless',
  'organizations',
  'api_keys',
  'sso',
  'pages',
  'console',
];

/** Later modules that are on in every form (docs/api.md §15: pages are not in the index). */
export const ON_IN_EVERY_FORM: readonly string[] = ['pages', 'console'];

/** Whether a later module starts enabled in a form. */
export function laterEnabled(name: string, form: 'A' | 'B' | 'full'): boolean {
  if (form === 'full') return name !== 'registration';
  return ON_IN_EVERY_FORM.includes(name);
}

/** Every endpoint of both forms, `group.label` → `METHOD /path`. */
export const ALL_ENDPOINTS: Record<string, string> = Object.fromEntries(
  [FORM_A_DOCUMENTATION, FORM_B_DOCUMENTATION].flatMap((doc) =>
    Object.entries(doc).flatMap(([group, labels]) =>
      Object.entries(labels).map(([label, route]) => [`${group}.${label}`, route]),
    ),
  ),
);

/** The documentation the index must show when exactly `enabled` modules are on. */
export function expectedDocumentation(enabled: ReadonlySet<string>): Documentation {
  const doc: Documentation = {};
  for (const module of MODULES) {
    if (!enabled.has(module.name)) continue;
    for (const key of module.endpoints) {
      const [group, label] = key.split('.') as [string, string];
      doc[group] ??= {};
      doc[group][label] = ALL_ENDPOINTS[key]!;
    }
  }
  return Object.fromEntries(
    Object.keys(doc)
      .sort()
      .map((g) => [g, doc[g]!]),
  );
}

/** Modules enabled at start in a form (docs/api.md §2). */
export function formModules(form: 'A' | 'B'): Set<string> {
  const optional = form === 'A' ? ['account', 'user_admin', 'idp'] : ['invitations'];
  return new Set([...MODULES.filter((m) => m.required).map((m) => m.name), ...optional]);
}

/** The whole index body of docs/api.md §3 around a documentation object. */
export function indexBody(documentation: Documentation) {
  return {
    message: 'Gatehouse user and access service',
    status: 'running',
    version: 'v1',
    documentation,
  };
}

/**
 * docs/api.md §3's entries of the modules beyond the seed that are built, by module, transcribed from
 * its list (a module's helper adds its own when it lands). `full` lists them all but `auth.signup`.
 */
export const LATER_MODULE_ENTRIES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  audit: { 'admin.audit': 'GET /api/v1/admin/audit' },
  recovery: {
    'auth.password_forgot': 'POST /api/v1/password/forgot',
    'auth.password_reset_open': 'GET /api/v1/password/reset/<token>',
    'auth.password_reset': 'POST /api/v1/password/reset/<token>',
    'users.password_reset': 'POST /api/v1/users/<id>/password-reset',
    'users.unlock': 'POST /api/v1/users/<id>/unlock',
  },
  email: {
    'auth.email_verification': 'POST /api/v1/email/verification',
    'auth.email_verify_open': 'GET /api/v1/email/verify/<token>',
    'auth.email_verify': 'POST /api/v1/email/verify/<token>',
    'auth.email_change': 'POST /api/v1/email/change',
  },
  registration: { 'auth.signup': 'POST /api/v1/signup' },
  mfa: {
    'auth.login_mfa': 'POST /api/v1/login/mfa',
    'auth.mfa': 'GET /api/v1/mfa',
    'auth.mfa_totp_enroll': 'POST /api/v1/mfa/totp',
    'auth.mfa_totp_confirm': 'POST /api/v1/mfa/totp/confirm',
    'auth.mfa_totp_delete': 'DELETE /api/v1/mfa/totp',
    'auth.mfa_recovery_codes': 'POST /api/v1/mfa/recovery-codes',
    'users.mfa_reset': 'DELETE /api/v1/users/<id>/mfa',
  },
  passkeys: {
    'auth.passkey_options': 'POST /api/v1/passkeys/authentication/options',
    'auth.login_passkey': 'POST /api/v1/login/passkey',
    'auth.passkeys': 'GET /api/v1/passkeys',
    'auth.passkey_registration_options': 'POST /api/v1/passkeys/registration/options',
    'auth.passkey_create': 'POST /api/v1/passkeys',
    'auth.passkey_delete': 'DELETE /api/v1/passkeys/<id>',
  },
  sessions: {
    'auth.sessions': 'GET /api/v1/sessions',
    'auth.session_delete': 'DELETE /api/v1/sessions/<id>',
    'users.sessions': 'GET /api/v1/users/<id>/sessions',
    'users.session_delete': 'DELETE /api/v1/users/<id>/sessions/<session_id>',
  },
  // docs/api.md §17, with OAUTH_DYNAMIC_REGISTRATION=off (the default: no oauth.register).
  oauth: {
    'oauth.authorize': 'GET /oauth2/authorize',
    'oauth.token': 'POST /oauth2/token',
    'oauth.userinfo': 'GET /oauth2/userinfo',
    'oauth.introspect': 'POST /oauth2/introspect',
    'oauth.revoke': 'POST /oauth2/revoke',
    'oauth.end_session': 'GET /oauth2/logout',
    'auth.grants': 'GET /api/v1/grants',
    'auth.grant_delete': 'DELETE /api/v1/grants/<client_id>',
    'clients.list': 'GET /api/v1/clients',
    'clients.create': 'POST /api/v1/clients',
    'clients.get': 'GET /api/v1/clients/<id>',
    'clients.update': 'PUT /api/v1/clients/<id>',
    'clients.delete': 'DELETE /api/v1/clients/<id>',
    'clients.secret': 'POST /api/v1/clients/<id>/secret',
    'clients.registration_token': 'POST /api/v1/clients/registration-tokens',
    'resources.list': 'GET /api/v1/resources',
    'resources.create': 'POST /api/v1/resources',
    'resources.update': 'PUT /api/v1/resources/<id>',
    'resources.delete': 'DELETE /api/v1/resources/<id>',
  },
  // docs/api.md §18: its entries join the idp group.
  providers: {
    'idp.providers': 'GET /api/v1/idp/providers',
    'idp.provider_create': 'POST /api/v1/idp/providers',
    'idp.provider_update': 'PUT /api/v1/idp/providers/<name>',
    'idp.provider_delete': 'DELETE /api/v1/idp/providers/<name>',
    'idp.start': 'GET /api/v1/idp/<name>/start',
    'idp.callback': 'GET /api/v1/idp/<name>/callback',
    'idp.identities': 'GET /api/v1/idp/identities',
    'idp.link': 'GET /api/v1/idp/<name>/link',
    'idp.identity_delete': 'DELETE /api/v1/idp/identities/<id>',
  },
  webhooks: {
    'webhooks.list': 'GET /api/v1/webhooks',
    'webhooks.create': 'POST /api/v1/webhooks',
    'webhooks.get': 'GET /api/v1/webhooks/<id>',
    'webhooks.update': 'PUT /api/v1/webhooks/<id>',
    'webhooks.delete': 'DELETE /api/v1/webhooks/<id>',
    'webhooks.secret': 'POST /api/v1/webhooks/<id>/secret',
    'webhooks.deliveries': 'GET /api/v1/webhooks/<id>/deliveries',
    'webhooks.retry': 'POST /api/v1/webhooks/<id>/deliveries/<delivery_id>/retry',
    'webhooks.test': 'POST /api/v1/webhooks/<id>/test',
  },
  passwordless: {
    'auth.login_email': 'POST /api/v1/login/email',
    'auth.login_email_verify': 'POST /api/v1/login/email/verify',
  },
  organizations: {
    'roles.list': 'GET /api/v1/roles',
    'roles.put': 'PUT /api/v1/roles/<name>',
    'roles.delete': 'DELETE /api/v1/roles/<name>',
    'users.roles': 'GET /api/v1/users/<id>/roles',
    'users.roles_put': 'PUT /api/v1/users/<id>/roles',
    'organizations.list': 'GET /api/v1/organizations',
    'organizations.create': 'POST /api/v1/organizations',
    'organizations.get': 'GET /api/v1/organizations/<id>',
    'organizations.update': 'PATCH /api/v1/organizations/<id>',
    'organizations.delete': 'DELETE /api/v1/organizations/<id>',
    'organizations.members': 'GET /api/v1/organizations/<id>/members',
    'organizations.member_put': 'PUT /api/v1/organizations/<id>/members/<user_id>',
    'organizations.member_delete': 'DELETE /api/v1/organizations/<id>/members/<user_id>',
    'organizations.invite': 'POST /api/v1/organizations/<id>/invitations',
    'organizations.invitations': 'GET /api/v1/organizations/<id>/invitations',
    'organizations.invitation_delete': 'DELETE /api/v1/organizations/<id>/invitations/<invitation_id>',
    'organizations.invitation_get': 'GET /api/v1/organization-invitations/<token>',
    'organizations.invitation_accept': 'POST /api/v1/organization-invitations/<token>/accept',
  },
  // docs/api.md §23; /saml/* are protocol endpoints (hidden from the index, like the callbacks).
  sso: {
    'idp.discover': 'POST /api/v1/idp/discover',
    // The organization's SCIM token; /scim/v2/* is SCIM's own protocol (hidden, like /saml/*).
    'organizations.scim_token': 'POST /api/v1/organizations/<id>/scim-token',
    'organizations.scim_token_delete': 'DELETE /api/v1/organizations/<id>/scim-token',
  },
  api_keys: {
    'api_keys.service_account_create': 'POST /api/v1/service-accounts',
    'api_keys.list': 'GET /api/v1/api-keys',
    'api_keys.create': 'POST /api/v1/api-keys',
    'api_keys.verify': 'POST /api/v1/api-keys/verify',
    'api_keys.get': 'GET /api/v1/api-keys/<id>',
    'api_keys.delete': 'DELETE /api/v1/api-keys/<id>',
  },
};

/** The same table, under the name the second-factor tests use. */
export const LATER_MODULE_ENDPOINTS = LATER_MODULE_ENTRIES;

/** The documentation the index must show with every seed module and these later modules on. */
export function fullDocumentation(later: readonly string[]): Documentation {
  const doc = expectedDocumentation(new Set(MODULES.map((m) => m.name)));
  for (const name of later) {
    for (const [key, route] of Object.entries(LATER_MODULE_ENTRIES[name] ?? {})) {
      const [group, label] = key.split('.') as [string, string];
      doc[group] ??= {};
      doc[group][label] = route;
    }
  }
  return Object.fromEntries(
    Object.keys(doc)
      .sort()
      .map((g) => [g, doc[g]!]),
  );
}
