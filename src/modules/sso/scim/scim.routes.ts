import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Endpoint, endpoint, type HttpMethod } from '../../../http/endpoint.ts';
import { type ClientInfo, clientInfo } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { callerOf, type ScimOrganization } from '../../organizations/index.ts';
import { listOf, resourceTypes, schemas, serviceProviderConfig } from './scim-discovery.ts';
import { SCIM_CONTENT_TYPE, ScimError, scimErrorBody } from './scim-errors.ts';
import {
  createScimGroup,
  getScimGroup,
  listScimGroups,
  patchScimGroup,
  removeScimGroup,
  replaceScimGroup,
} from './scim-groups.service.ts';
import { createScimToken, revokeScimToken, scimCaller } from './scim-token.service.ts';
import { scimBase } from './scim-user-view.ts';
import {
  createScimUser,
  getScimUser,
  listScimUsers,
  patchScimUser,
  removeScimUser,
  replaceScimUser,
} from './scim-users.service.ts';

const OrganizationParams = Type.Object({ id: Type.String({ maxLength: 512 }) });
const IdParams = Type.Object({ id: Type.String({ maxLength: 512 }) });
const TokenAnswer = Type.Object({ token: Type.String(), created_at: Type.String() });

interface ScimAnswer {
  status: 200 | 201 | 204;
  body?: unknown;
  location?: string;
}

type Query = Record<string, string | undefined>;
interface ScimRequest {
  org: ScimOrganization;
  params: { id?: string };
  query: Query;
  body: unknown;
  client: ClientInfo;
}

/**
 * A SCIM endpoint: the organization's bearer token first, then the work; answers and refusals in
 * `application/scim+json` (RFC 7644 §3.1, §3.12). Other errors go to the one error handler, which
 * renders them in the SCIM error schema for /scim/v2 (src/http/errors.ts).
 */
function scim(
  ctx: AppContext,
  method: HttpMethod,
  path: string,
  label: string,
  summary: string,
  run: (r: ScimRequest) => Promise<ScimAnswer>,
): Endpoint {
  return endpoint({
    group: 'scim',
    label,
    method,
    path: `/scim/v2${path}`,
    access: 'public',
    hidden: true,
    summary,
    schema: path.includes(':id') ? { params: IdParams } : {},
    ownsReply: true,
    handler: async (req: FastifyRequest, reply: FastifyReply) => {
      reply.header('cache-control', 'no-store');
      try {
        const org = await scimCaller(ctx, req.headers.authorization);
        const out = await run({
          org,
          params: req.params as { id?: string },
          query: req.query as Query,
          body: req.body,
          client: clientInfo(req),
        });
        reply.status(out.status);
        if (out.location !== undefined) reply.header('location', out.location);
        if (out.body === undefined) return reply.send();
        return reply.type(SCIM_CONTENT_TYPE).send(JSON.stringify(out.body));
      } catch (err) {
        if (!(err instanceof ScimError)) throw err;
        req.log.info({ status: err.status, scimType: err.scimType }, 'scim request refused');
        for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
        return reply
          .status(err.status)
          .type(SCIM_CONTENT_TYPE)
          .send(JSON.stringify(scimErrorBody(err.status, err.message, err.scimType)));
      }
    },
  });
}

const notFound = (what: string, id: string) => new ScimError(404, `${what} ${id.slice(0, 120)} not found`);

/** The SCIM 2.0 endpoints (docs/api.md §23) and the organization's token endpoints. */
export function scimEndpoints(ctx: AppContext): Endpoint[] {
  const base = () => scimBase(ctx.config.publicUrl);
  const ok = (body: unknown): ScimAnswer => ({ status: 200, body });
  const created = (body: { meta: { location: string } }): ScimAnswer => ({
    status: 201,
    body,
    location: body.meta.location,
  });
  const id = (r: ScimRequest) => r.params.id ?? '';
  return [
    endpoint({
      group: 'organizations',
      label: 'scim_token',
      method: 'POST',
      path: '/api/v1/organizations/:id/scim-token',
      access: 'authenticated',
      summary:
        'A new SCIM token for the organization, shown once, replacing the previous (admin or org:settings:manage)',
      schema: { params: OrganizationParams, response: { 201: TokenAnswer } },
      status: 201,
      issuesTokens: true,
      handler: (req) => createScimToken(ctx, req.params.id, callerOf(req)),
    }),
    endpoint({
      group: 'organizations',
      label: 'scim_token_delete',
      method: 'DELETE',
      path: '/api/v1/organizations/:id/scim-token',
      access: 'authenticated',
      summary: "Revoke the organization's SCIM token (admin or org:settings:manage)",
      schema: { params: OrganizationParams, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await revokeScimToken(ctx, req.params.id, callerOf(req));
      },
    }),
    scim(
      ctx,
      'GET',
      '/ServiceProviderConfig',
      'service_provider_config',
      'What this SCIM service supports',
      async () => ok(serviceProviderConfig(base())),
    ),
    scim(ctx, 'GET', '/ResourceTypes', 'resource_types', 'The SCIM resource types', async () =>
      ok(listOf(resourceTypes(base()))),
    ),
    scim(ctx, 'GET', '/ResourceTypes/:id', 'resource_type', 'One SCIM resource type', async (r) => {
      const found = resourceTypes(base()).find((t) => t.id === id(r));
      if (!found) throw notFound('ResourceType', id(r));
      return ok(found);
    }),
    scim(ctx, 'GET', '/Schemas', 'schemas', 'The SCIM schemas', async () => ok(listOf(schemas(base())))),
    scim(ctx, 'GET', '/Schemas/:id', 'schema', 'One SCIM schema', async (r) => {
      const found = schemas(base()).find((s) => s.id === id(r));
      if (!found) throw notFound('Schema', id(r));
      return ok(found);
    }),
    scim(ctx, 'GET', '/Users', 'users', "The organization's users (filter, startIndex, count)", async (r) =>
      ok(await listScimUsers(ctx, r.org, r.query)),
    ),
    scim(ctx, 'POST', '/Users', 'user_create', 'Provision a user', async (r) =>
      created(await createScimUser(ctx, r.org, r.body, r.client)),
    ),
    scim(ctx, 'GET', '/Users/:id', 'user', 'One user', async (r) => ok(await getScimUser(ctx, r.org, id(r)))),
    scim(ctx, 'PUT', '/Users/:id', 'user_replace', 'Replace a user', async (r) =>
      ok(await replaceScimUser(ctx, r.org, id(r), r.body, r.client)),
    ),
    scim(ctx, 'PATCH', '/Users/:id', 'user_patch', 'Change a user (add, replace, remove)', async (r) =>
      ok(await patchScimUser(ctx, r.org, id(r), r.body, r.client)),
    ),
    scim(ctx, 'DELETE', '/Users/:id', 'user_delete', 'Deprovision a user', async (r) => {
      await removeScimUser(ctx, r.org, id(r), r.client);
      return { status: 204 };
    }),
    scim(
      ctx,
      'GET',
      '/Groups',
      'groups',
      "The organization's groups (filter, excludedAttributes)",
      async (r) => ok(await listScimGroups(ctx, r.org, r.query)),
    ),
    scim(ctx, 'POST', '/Groups', 'group_create', 'Create a group', async (r) =>
      created(await createScimGroup(ctx, r.org, r.body, r.client)),
    ),
    scim(ctx, 'GET', '/Groups/:id', 'group', 'One group', async (r) =>
      ok(await getScimGroup(ctx, r.org, id(r), r.query.excludedAttributes)),
    ),
    scim(ctx, 'PUT', '/Groups/:id', 'group_replace', 'Replace a group', async (r) =>
      ok(await replaceScimGroup(ctx, r.org, id(r), r.body, r.client)),
    ),
    scim(ctx, 'PATCH', '/Groups/:id', 'group_patch', "Change a group's members or name", async (r) =>
      ok(await patchScimGroup(ctx, r.org, id(r), r.body, r.client)),
    ),
    scim(ctx, 'DELETE', '/Groups/:id', 'group_delete', 'Delete a group', async (r) => {
      await removeScimGroup(ctx, r.org, id(r), r.client);
      return { status: 204 };
    }),
  ];
}
