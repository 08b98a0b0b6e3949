import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import { samlSettingsOf } from '../saml/saml-config.ts';
import { listProviderRows } from '../upstream/providers.queries.ts';
import type { Provider } from '../upstream/providers.service.ts';
import type { UpdateProviderInput } from './providers.schemas.ts';

type Merged = Omit<Provider, 'version'>;

// Fields of the OpenID Connect and GitHub kinds, meaningless for a SAML connection (docs/api.md §23).
const OIDC_FIELDS = [
  'issuer',
  'client_id',
  'client_secret',
  'scopes',
  'tenant_id',
  'team_id',
  'key_id',
  'private_key',
  'api_url',
] as const;

const invalid = (detail: string) => new ApiError('validation_failed', { detail });

/**
 * A SAML connection's definition (docs/api.md §23): its `saml` block or `idp_metadata_xml` read and
 * checked (400), no OpenID Connect field, `issuer`, `client_id`, `scopes` and `preset` empty.
 */
export function completeSaml(
  input: Merged,
  given: UpdateProviderInput & { preset?: unknown },
  stored: Merged['saml'],
): Merged {
  for (const field of OIDC_FIELDS) {
    if (given[field] !== undefined) throw invalid(`a saml provider takes no ${field}`);
  }
  if (given.preset !== undefined && given.preset !== null) throw invalid('a saml provider takes no preset');
  return {
    ...input,
    preset: null,
    issuer: '',
    clientId: '',
    clientSecret: null,
    privateKey: null,
    settings: {},
    scopes: [],
    saml: samlSettingsOf(given.saml, given.idp_metadata_xml, stored),
  };
}

/** The `saml` and `idp_metadata_xml` fields belong to kind `saml` only. */
export function refuseSamlFields(given: UpdateProviderInput): void {
  if (given.saml !== undefined || given.idp_metadata_xml !== undefined) {
    throw invalid('saml and idp_metadata_xml are for kind "saml"');
  }
}

/**
 * The domains a provider claims (docs/api.md §23, "Domains"): lower-cased; while it is enabled, none
 * may be claimed by another enabled provider (409 `provider_exists`); with an owning organization,
 * each must be one of that organization's domains (400), checked by `orgDomains`.
 */
export async function checkDomains(
  ctx: AppContext,
  p: Merged,
  orgDomains: (organizationId: string) => Promise<string[] | null>,
): Promise<Merged> {
  const domains = [...new Set(p.domains.map((d) => d.toLowerCase()))];
  for (const d of domains) {
    if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/.test(d)) {
      throw invalid(`"${d}" is not a domain name`);
    }
  }
  if (p.organizationId !== null) {
    const owned = await orgDomains(p.organizationId);
    if (owned === null) throw invalid('organization_id names no organization');
    const outside = domains.filter((d) => !owned.includes(d));
    if (outside.length > 0) {
      throw invalid(`domains must be among the organization's domains (not: ${outside.join(', ')})`);
    }
  }
  if (p.enabled && domains.length > 0) {
    for (const row of await listProviderRows(ctx.db)) {
      if (row.name === p.name || row.enabled !== 1) continue;
      const taken = (JSON.parse(row.domains) as string[]).filter((d) => domains.includes(d));
      if (taken.length > 0) {
        throw new ApiError('provider_exists', {
          detail: `The domain ${taken[0]} belongs to the enabled provider "${row.name}" already`,
        });
      }
    }
  }
  return { ...p, domains };
}
