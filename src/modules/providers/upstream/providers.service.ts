import type { SecretsKey } from '../../../identity/tokens/secrets-key.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import type { Db } from '../../../platform/db/schema.ts';
import type { ProviderView } from '../admin/providers.schemas.ts';
import type { SamlSettings } from '../saml/saml-config.ts';
import type { PresetName, PresetSettings, ProviderKind } from './presets.ts';
import { findProviderRow, listProviderRows, type ProviderRow } from './providers.queries.ts';

/** A provider with its secrets opened, for the flow; never answered. */
export interface Provider {
  name: string;
  displayName: string;
  kind: ProviderKind;
  preset: PresetName | null;
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  privateKey: string | null;
  settings: PresetSettings;
  scopes: string[];
  enabled: boolean;
  autoProvision: boolean;
  linkByEmail: boolean;
  linkAdmins: boolean;
  allowedDomains: string[];
  /** docs/api.md §23: the organization owning a connection, and the e-mail domains it claims. */
  organizationId: string | null;
  domains: string[];
  /** A SAML connection's settings (kind `saml`), else null. */
  saml: SamlSettings | null;
  /** When the row last changed (the flow's cached upstream configuration is keyed by it). */
  version: number;
}

/** The seed's provider (OIDC_ISSUER) keeps this name; no stored provider may take it (docs/api.md §18). */
export const DEFAULT_PROVIDER = 'default';

/** The key provider secrets are sealed with; without one the module is unavailable. */
export function key(ctx: AppContext): SecretsKey {
  const k = ctx.secrets.key();
  if (k === null) throw new ApiError('module_unavailable', { detail: 'SECRETS_KEY is not set' });
  return k;
}

/** What a provider's sealed field is bound to (its name and the field). */
export const secretContext = (name: string, field: string) => `idp_provider:${name}:${field}`;

/** The answer shape: no secret, no private key. */
export function toView(row: ProviderRow): ProviderView {
  const saml = row.kind === 'saml';
  return {
    name: row.name,
    display_name: row.display_name,
    kind: row.kind as ProviderKind,
    // docs/api.md §23: a SAML connection has no issuer, client or scopes of its own.
    preset: saml ? null : ((row.preset as PresetName | null) ?? null),
    issuer: saml ? null : row.issuer,
    client_id: saml ? null : row.client_id,
    scopes: saml ? null : (JSON.parse(row.scopes) as string[]),
    enabled: row.enabled === 1,
    auto_provision: row.auto_provision === 1,
    link_by_email: row.link_by_email === 1,
    link_admins: row.link_admins === 1,
    allowed_domains: JSON.parse(row.allowed_domains) as string[],
    organization_id: row.organization_id,
    domains: JSON.parse(row.domains) as string[],
    ...(row.saml === null ? {} : { saml: JSON.parse(row.saml) as SamlSettings }),
  };
}

/** Opens a stored provider's secrets for the flow. */
export function toProvider(ctx: AppContext, row: ProviderRow): Provider {
  const open = (box: string | null, field: string): string | null => {
    if (box === null) return null;
    const plain = key(ctx).open(box, secretContext(row.name, field));
    if (plain === null)
      throw new Error(`the ${field} of provider ${row.name} does not open with SECRETS_KEY`);
    return plain.toString('utf8');
  };
  const view = toView(row);
  return {
    name: row.name,
    displayName: view.display_name,
    kind: view.kind,
    preset: view.preset,
    issuer: row.issuer,
    clientId: row.client_id,
    clientSecret: open(row.client_secret_box, 'client_secret'),
    privateKey: open(row.private_key_box, 'private_key'),
    settings: JSON.parse(row.settings) as PresetSettings,
    scopes: view.scopes ?? [],
    enabled: view.enabled,
    autoProvision: view.auto_provision,
    linkByEmail: view.link_by_email,
    linkAdmins: view.link_admins,
    allowedDomains: view.allowed_domains,
    organizationId: row.organization_id,
    domains: view.domains,
    saml: view.saml ?? null,
    version: Number(row.updated_at),
  };
}

/** `GET /api/v1/idp/providers`. */
export async function listProviders(ctx: AppContext): Promise<{ data: ProviderView[] }> {
  return { data: (await listProviderRows(ctx.db)).map(toView) };
}

/**
 * The seed's provider (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET), named `default`, with §7's
 * settings: its redirect flow works like any stored provider's; without OIDC_CLIENT_SECRET it is a
 * public client (PKCE alone). Null when no provider is configured.
 */
export function defaultProvider(ctx: AppContext): Provider | null {
  const { oidc } = ctx.config;
  if (oidc.issuer === null || oidc.clientId === null) return null;
  return {
    name: DEFAULT_PROVIDER,
    displayName: DEFAULT_DISPLAY_NAME,
    kind: 'oidc',
    preset: null,
    issuer: oidc.issuer,
    clientId: oidc.clientId,
    clientSecret: oidc.clientSecret,
    privateKey: null,
    settings: {},
    scopes: ['openid', 'email', 'profile'],
    enabled: true,
    autoProvision: oidc.autoProvision,
    linkByEmail: oidc.linkByEmail,
    linkAdmins: oidc.linkAdmins,
    allowedDomains: [],
    organizationId: null,
    domains: [],
    saml: null,
    version: 0,
  };
}

/** The `default` provider's button label. */
export const DEFAULT_DISPLAY_NAME = 'single sign-on';

/** The enabled providers, for the sign-in page's buttons (name, label and icon only), `default` first. */
export async function enabledProviders(
  ctx: AppContext,
): Promise<Array<{ name: string; displayName: string; preset: string | null }>> {
  const seed = defaultProvider(ctx);
  // SAML connections get no button (docs/sso.md): the address-first step sends their domains to
  // them, and a list of buttons would show every customer's company on the public sign-in page.
  const stored = (await listProviderRows(ctx.db))
    .filter((r) => r.enabled === 1 && r.kind !== 'saml')
    .map((r) => ({ name: r.name, displayName: r.display_name, preset: r.preset }));
  return seed ? [{ name: seed.name, displayName: seed.displayName, preset: null }, ...stored] : stored;
}

/** A stored provider (enabled or not), or 404 `provider_not_found`. */
export async function requireProvider(ctx: AppContext, name: string): Promise<Provider> {
  if (name === DEFAULT_PROVIDER) {
    const seed = defaultProvider(ctx);
    if (seed === null) throw notFound(name);
    return seed;
  }
  const row = await findProviderRow(ctx.db, name);
  if (!row) throw notFound(name);
  return toProvider(ctx, row);
}

export function notFound(name: string): ApiError {
  const shown = /^[a-z0-9_-]{1,32}$/.test(name) ? ` "${name}"` : '';
  return new ApiError('provider_not_found', { detail: `There is no provider${shown}` });
}

/**
 * Home-realm discovery (docs/api.md §23): the enabled provider claiming this exact domain
 * (lower-cased, no subdomains), or null. A disabled one claims nothing.
 */
export async function providerForDomain(
  ctx: AppContext,
  domain: string,
  db: Db = ctx.db,
): Promise<{ name: string; displayName: string } | null> {
  const wanted = domain.toLowerCase();
  for (const row of await listProviderRows(db)) {
    if (row.enabled !== 1) continue;
    if ((JSON.parse(row.domains) as string[]).includes(wanted))
      return { name: row.name, displayName: row.display_name };
  }
  return null;
}

/** Whether any enabled provider claims a domain: the hosted sign-in then asks for the address first. */
export async function anyDomainClaimed(ctx: AppContext): Promise<boolean> {
  return (await listProviderRows(ctx.db)).some((r) => r.enabled === 1 && r.domains !== '[]');
}
