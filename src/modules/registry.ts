import type { AppContext } from '../context.ts';
import { consoleEndpoints } from '../pages/console.routes.ts';
import { pagesEndpoints } from '../pages/pages.routes.ts';
import { accountEndpoints } from './account/account.routes.ts';
import { adminEndpoints } from './admin/admin.routes.ts';
import { auditEndpoints } from './audit/audit.routes.ts';
import { authEndpoints } from './auth/auth.routes.ts';
import { coreEndpoints } from './core/core.routes.ts';
import { emailEndpoints } from './email/email.routes.ts';
import { describeEndpoint, type Endpoint } from './endpoint.ts';
import { healthEndpoints } from './health/health.routes.ts';
import { idpEndpoints } from './idp/idp.routes.ts';
import { invitationEndpoints } from './invitations/invitations.routes.ts';
import { mfaEndpoints } from './mfa/mfa.routes.ts';
import { MODULE_INFO } from './module-info.ts';
import type { ModuleCatalog, ModuleInfo, ModuleName } from './module-state.ts';
import { oauthEndpoints } from './oauth/oauth.routes.ts';
import { passkeyEndpoints } from './passkeys/passkeys.routes.ts';
import { passwordlessEndpoints } from './passwordless/passwordless.routes.ts';
import { providerEndpoints } from './providers/providers.routes.ts';
import { recoveryEndpoints } from './recovery/recovery.routes.ts';
import { registrationEndpoints } from './registration/registration.routes.ts';
import { sessionEndpoints } from './sessions/sessions.routes.ts';
import { userAdminEndpoints } from './user-admin/user-admin.routes.ts';
import { unlockEndpoints } from './users/unlock.routes.ts';
import { usersEndpoints } from './users/users.routes.ts';
import { webhookEndpoints } from './webhooks/webhooks.routes.ts';

export type { ModuleCatalog } from './module-state.ts';

type EndpointFactory = (ctx: AppContext, catalog: () => ModuleCatalog) => Endpoint[];

/**
 * Each module's endpoint declarations. A module not built yet declares none, so the index never
 * lists an endpoint that does not answer.
 */
const ENDPOINTS: Record<ModuleName, EndpointFactory> = {
  core: coreEndpoints,
  health: healthEndpoints,
  admin: adminEndpoints,
  auth: authEndpoints,
  users: usersEndpoints,
  account: accountEndpoints,
  user_admin: userAdminEndpoints,
  idp: idpEndpoints,
  invitations: invitationEndpoints,
  audit: auditEndpoints,
  // Password recovery (docs/api.md §11) and the admin unlock of its lockouts (docs/security.md).
  recovery: (ctx) => [...recoveryEndpoints(ctx), ...unlockEndpoints(ctx)],
  email: emailEndpoints,
  registration: registrationEndpoints,
  mfa: mfaEndpoints,
  passkeys: passkeyEndpoints,
  sessions: sessionEndpoints,
  oauth: oauthEndpoints,
  providers: providerEndpoints,
  webhooks: webhookEndpoints,
  passwordless: passwordlessEndpoints,
  pages: pagesEndpoints,
  console: consoleEndpoints,
};

/** A module with its endpoints instantiated for one app. */
export interface LoadedModule {
  info: ModuleInfo;
  endpoints: Endpoint[];
}

/** Instantiates every module's endpoints in the order of docs/api.md §2. */
export function loadModules(ctx: AppContext): LoadedModule[] {
  let loaded: LoadedModule[] = [];
  const catalog = (): ModuleCatalog =>
    loaded.map(({ info, endpoints }) => ({
      name: info.name,
      required: info.required,
      description: info.description,
      endpoints: endpoints.filter((e) => !e.hidden).map(describeEndpoint),
    }));
  loaded = MODULE_INFO.map((info) => ({ info, endpoints: ENDPOINTS[info.name](ctx, catalog) }));
  return loaded;
}

/** The index `documentation` of docs/api.md §3: enabled modules' listed endpoints, groups sorted by name. */
export function documentation(
  modules: LoadedModule[],
  isEnabled: (name: ModuleName) => boolean,
): Record<string, Record<string, string>> {
  const groups: Record<string, Record<string, string>> = {};
  for (const { info, endpoints } of modules) {
    if (!isEnabled(info.name)) continue;
    for (const e of endpoints) {
      if (e.hidden) continue;
      groups[e.group] ??= {};
      groups[e.group]![e.label] = describeEndpoint(e);
    }
  }
  return Object.fromEntries(
    Object.keys(groups)
      .sort()
      .map((g) => [g, groups[g]!]),
  );
}
