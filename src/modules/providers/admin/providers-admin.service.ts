import type { ClientInfo } from '../../../identity/index.ts';
import { type AuditAction, recordAudit } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { isUniqueViolation } from '../../../platform/db/dialect.ts';
import {
  checkApplePrivateKey,
  checkServerUrl,
  microsoftIssuer,
  PRESETS,
  type PresetSettings,
} from '../upstream/presets.ts';
import {
  deleteProviderRow,
  findProviderRow,
  insertProviderRow,
  type ProviderRow,
  updateProviderRow,
} from '../upstream/providers.queries.ts';
import {
  DEFAULT_PROVIDER,
  key,
  notFound,
  type Provider,
  secretContext,
  toProvider,
  toView,
} from '../upstream/providers.service.ts';
import { selectOrganizationDomains } from './organization-domains.queries.ts';
import type { CreateProviderInput, ProviderView, UpdateProviderInput } from './providers.schemas.ts';
import { checkDomains, completeSaml, refuseSamlFields } from './saml-admin.ts';

/* The admin API of docs/api.md §18: create, update, delete, with presets applied and secrets sealed. */

const RESERVED = new Set([
  DEFAULT_PROVIDER,
  'providers',
  'identities',
  'config',
  'verify',
  'continue',
  'buttons',
]);

type Merged = Omit<Provider, 'version'>;

/**
 * Applies a preset and checks the whole definition: issuer and scopes from the preset unless given,
 * microsoft's tenant, apple's team, key and private key, a client secret where the kind needs one.
 */
async function complete(
  input: Merged,
  given: { issuer?: string | undefined; scopes?: string[] | undefined },
) {
  const preset = input.preset === null ? null : PRESETS[input.preset];
  if (preset) {
    if (input.kind !== preset.kind) {
      throw new ApiError('validation_failed', { detail: `preset ${input.preset} is of kind ${preset.kind}` });
    }
    if (input.preset === 'microsoft') {
      if (!input.settings.tenant_id) {
        throw new ApiError('validation_failed', { detail: 'preset microsoft needs tenant_id' });
      }
      input.issuer = microsoftIssuer(input.settings.tenant_id);
    } else if (input.preset === 'gitlab' || input.preset === 'github') {
      // Self-hosted GitLab and GitHub Enterprise Server have their own issuer.
      input.issuer = given.issuer ?? (input.issuer || (preset.issuer as string));
    } else {
      // Fixed issuers are not overridable (a typo would be a different provider).
      if (given.issuer !== undefined && given.issuer !== preset.issuer) {
        throw new ApiError('validation_failed', {
          detail: `preset ${input.preset} has the issuer ${preset.issuer}`,
        });
      }
      input.issuer = preset.issuer as string;
    }
    if (given.scopes === undefined && input.scopes.length === 0) input.scopes = [...preset.scopes];
  }
  if (input.scopes.length === 0) {
    input.scopes = input.kind === 'oidc' ? ['openid', 'email', 'profile'] : [];
  }
  if (input.issuer === '')
    throw new ApiError('validation_failed', { detail: 'issuer is required without a preset' });
  checkServerUrl('issuer', input.issuer);
  if (input.settings.api_url !== undefined) checkServerUrl('api_url', input.settings.api_url);
  if (input.kind === 'oidc' && !input.scopes.includes('openid')) {
    throw new ApiError('validation_failed', {
      detail: 'scopes of an OpenID Connect provider must include "openid"',
    });
  }
  if (input.preset === 'apple') {
    const { team_id, key_id } = input.settings;
    if (!team_id || !key_id || input.privateKey === null) {
      throw new ApiError('validation_failed', {
        detail: 'preset apple needs team_id, key_id and private_key',
      });
    }
    await checkApplePrivateKey(input.privateKey);
    input.clientSecret = null;
  } else if (input.kind === 'github' && input.clientSecret === null) {
    throw new ApiError('validation_failed', { detail: 'a github provider needs client_secret' });
  }
  return input;
}

function toRow(ctx: AppContext, p: Merged, createdAt: number, now: number): ProviderRow {
  const seal = (value: string | null, field: string) =>
    value === null ? null : key(ctx).seal(Buffer.from(value, 'utf8'), secretContext(p.name, field));
  return {
    name: p.name,
    display_name: p.displayName,
    kind: p.kind,
    preset: p.preset,
    issuer: p.issuer,
    client_id: p.clientId,
    client_secret_box: seal(p.clientSecret, 'client_secret'),
    private_key_box: seal(p.privateKey, 'private_key'),
    settings: JSON.stringify(p.settings),
    scopes: JSON.stringify(p.scopes),
    enabled: p.enabled ? 1 : 0,
    auto_provision: p.autoProvision ? 1 : 0,
    link_by_email: p.linkByEmail ? 1 : 0,
    link_admins: p.linkAdmins ? 1 : 0,
    allowed_domains: JSON.stringify(p.allowedDomains.map((d) => d.toLowerCase())),
    created_at: createdAt,
    updated_at: now,
    organization_id: p.organizationId,
    domains: JSON.stringify(p.domains),
    saml: p.saml === null ? null : JSON.stringify(p.saml),
  };
}

function settingsOf(input: UpdateProviderInput, base: PresetSettings): PresetSettings {
  const next: PresetSettings = { ...base };
  if (input.tenant_id !== undefined) next.tenant_id = input.tenant_id;
  if (input.team_id !== undefined) next.team_id = input.team_id;
  if (input.key_id !== undefined) next.key_id = input.key_id;
  if (input.api_url !== undefined) next.api_url = input.api_url;
  return next;
}

/** `POST /api/v1/idp/providers` → 201 the provider; a taken name 409 `provider_exists`. */
export async function createProvider(
  ctx: AppContext,
  input: CreateProviderInput,
  actorId: string,
  client: ClientInfo,
): Promise<ProviderView> {
  key(ctx);
  if (RESERVED.has(input.name)) {
    throw new ApiError('provider_exists', { detail: `The name "${input.name}" is reserved` });
  }
  const preset = input.preset ?? null;
  const kind = input.kind ?? (preset ? PRESETS[preset].kind : 'oidc');
  const fields = {
    name: input.name,
    displayName: input.display_name ?? (preset ? PRESETS[preset].displayName : input.name),
    kind,
    preset,
    issuer: input.issuer ?? '',
    clientId: kind === 'saml' ? '' : required(input.client_id, 'client_id'),
    clientSecret: input.client_secret ?? null,
    privateKey: input.private_key ?? null,
    settings: settingsOf(input, {}),
    scopes: input.scopes ?? [],
    enabled: input.enabled ?? true,
    autoProvision: input.auto_provision ?? true,
    linkByEmail: input.link_by_email ?? true,
    linkAdmins: input.link_admins ?? false,
    allowedDomains: input.allowed_domains ?? [],
    organizationId: input.organization_id ?? null,
    domains: input.domains ?? [],
    saml: null,
  };
  const merged = await completeKind(ctx, fields, input, { issuer: input.issuer, scopes: input.scopes });
  const now = Date.now();
  const row = toRow(ctx, merged, now, now);
  try {
    await ctx.db.transaction().execute(async (trx) => {
      await insertProviderRow(trx, row);
      await recordAudit(trx, audit('idp_provider.create', actorId, row.name, client));
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new ApiError('provider_exists', { detail: `A provider named "${input.name}" exists already` });
    }
    throw err;
  }
  return toView(row);
}

/** `PUT /api/v1/idp/providers/<name>` → 200 the provider; secrets not sent stay as they are. */
export async function updateProvider(
  ctx: AppContext,
  name: string,
  input: UpdateProviderInput,
  actorId: string,
  client: ClientInfo,
): Promise<ProviderView> {
  const row = await findProviderRow(ctx.db, name);
  if (!row) throw notFound(name);
  const current = toProvider(ctx, row);
  const merged = await completeKind(
    ctx,
    {
      ...current,
      displayName: input.display_name ?? current.displayName,
      issuer: input.issuer ?? current.issuer,
      clientId: input.client_id ?? current.clientId,
      clientSecret: input.client_secret ?? current.clientSecret,
      privateKey: input.private_key ?? current.privateKey,
      settings: settingsOf(input, current.settings),
      scopes: input.scopes ?? current.scopes,
      enabled: input.enabled ?? current.enabled,
      autoProvision: input.auto_provision ?? current.autoProvision,
      linkByEmail: input.link_by_email ?? current.linkByEmail,
      linkAdmins: input.link_admins ?? current.linkAdmins,
      allowedDomains: input.allowed_domains ?? current.allowedDomains,
      organizationId: input.organization_id !== undefined ? input.organization_id : current.organizationId,
      domains: input.domains ?? current.domains,
    },
    input,
    { issuer: input.issuer, scopes: input.scopes },
  );
  const next = toRow(ctx, merged, Number(row.created_at), Math.max(Date.now(), Number(row.updated_at) + 1));
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await updateProviderRow(trx, name, next))) throw notFound(name);
    await recordAudit(trx, audit('idp_provider.update', actorId, name, client));
  });
  return toView(next);
}

/** `DELETE /api/v1/idp/providers/<name>` → 204. Linked identities stay (re-creating the provider finds them). */
export async function deleteProvider(ctx: AppContext, name: string, actorId: string, client: ClientInfo) {
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await deleteProviderRow(trx, name))) throw notFound(name);
    await recordAudit(trx, audit('idp_provider.delete', actorId, name, client));
  });
}

/**
 * A definition completed by its kind: a SAML connection's block (docs/api.md §23) or an OpenID
 * Connect / GitHub provider's preset and checks; then the domains it claims.
 */
async function completeKind(
  ctx: AppContext,
  fields: Merged,
  input: UpdateProviderInput & { preset?: unknown },
  given: { issuer?: string | undefined; scopes?: string[] | undefined },
): Promise<Merged> {
  let merged: Merged;
  if (fields.kind === 'saml') {
    merged = completeSaml(fields, input, fields.saml);
  } else {
    refuseSamlFields(input);
    merged = await complete(fields, given);
  }
  return checkDomains(ctx, merged, (organizationId) => selectOrganizationDomains(ctx.db, organizationId));
}

function required(value: string | undefined, field: string): string {
  if (value === undefined) throw new ApiError('validation_failed', { detail: `${field} is required` });
  return value;
}

function audit(action: AuditAction, actorId: string, name: string, client: ClientInfo) {
  return {
    action,
    actor: { type: 'user' as const, id: actorId },
    target: { type: 'idp_provider' as const, id: name },
    client,
    details: { name },
  };
}
