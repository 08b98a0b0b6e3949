import { GROUP_SCHEMA, LIST_SCHEMA, USER_SCHEMA } from './scim-user-view.ts';

/*
 * The discovery documents of RFC 7644 §4 (ServiceProviderConfig, ResourceTypes, Schemas): what
 * Gatehouse supports, for the IdP's configuration. The Schemas list only the attributes Gatehouse
 * keeps (RFC 7643 §7 allows a subset).
 */

const SPC_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const RT_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';

export function serviceProviderConfig(base: string) {
  return {
    schemas: [SPC_SCHEMA],
    documentationUri: 'https://github.com/gatehouse/gatehouse/blob/main/docs/sso.md#scim-20-provisioning',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: 1000 },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: "The organization's SCIM token (POST /api/v1/organizations/<id>/scim-token)",
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string) {
  return [
    {
      schemas: [RT_SCHEMA],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'A member of the organization',
      schema: USER_SCHEMA,
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: [RT_SCHEMA],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: "A group; its displayName maps to roles through the organization's scim_group_roles",
      schema: GROUP_SCHEMA,
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

const attribute = (name: string, type: string, extra: Record<string, unknown> = {}) => ({
  name,
  type,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

export function schemas(base: string) {
  return [
    {
      schemas: [SCHEMA_SCHEMA],
      id: USER_SCHEMA,
      name: 'User',
      description: 'User Account',
      attributes: [
        attribute('userName', 'string', { required: true, uniqueness: 'server' }),
        attribute('name', 'complex', {
          subAttributes: [
            attribute('formatted', 'string'),
            attribute('givenName', 'string'),
            attribute('familyName', 'string'),
          ],
        }),
        attribute('displayName', 'string'),
        attribute('active', 'boolean'),
        attribute('emails', 'complex', {
          multiValued: true,
          subAttributes: [
            attribute('value', 'string'),
            attribute('type', 'string'),
            attribute('primary', 'boolean'),
          ],
        }),
        attribute('password', 'string', { mutability: 'writeOnly', returned: 'never' }),
      ],
      meta: { resourceType: 'Schema', location: `${base}/Schemas/${USER_SCHEMA}` },
    },
    {
      schemas: [SCHEMA_SCHEMA],
      id: GROUP_SCHEMA,
      name: 'Group',
      description: 'Group',
      attributes: [
        attribute('displayName', 'string', { required: true, uniqueness: 'server' }),
        attribute('members', 'complex', {
          multiValued: true,
          subAttributes: [
            attribute('value', 'string', { mutability: 'immutable' }),
            attribute('display', 'string', { mutability: 'readOnly' }),
            attribute('$ref', 'reference', { mutability: 'immutable', referenceTypes: ['User'] }),
          ],
        }),
      ],
      meta: { resourceType: 'Schema', location: `${base}/Schemas/${GROUP_SCHEMA}` },
    },
  ];
}

/** A ListResponse of every item (the discovery lists are short). */
export const listOf = (items: unknown[]) => ({
  schemas: [LIST_SCHEMA],
  totalResults: items.length,
  startIndex: 1,
  itemsPerPage: items.length,
  Resources: items,
});
