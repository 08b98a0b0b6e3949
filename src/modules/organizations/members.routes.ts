import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { callerOf, createdOrChanged } from './caller.ts';
import { MemberPage, MemberParams, MemberSchema, MembersQuery, PutMemberBody } from './members.schemas.ts';
import { deleteMember, listMembers, putMember } from './members.service.ts';
import { OrganizationParams } from './organizations.schemas.ts';

/** docs/api.md §21: an organization's members. */
export function memberEndpoints(ctx: AppContext): Endpoint[] {
  const answer = createdOrChanged();
  return [
    endpoint({
      group: 'organizations',
      label: 'members',
      method: 'GET',
      path: '/api/v1/organizations/:id/members',
      access: 'authenticated',
      summary: 'Members of an organization (admin or org:members:read), in pages',
      schema: { params: OrganizationParams, querystring: MembersQuery, response: { 200: MemberPage } },
      handler: (req) => listMembers(ctx, req.params.id, req.query, callerOf(req)),
    }),
    endpoint({
      group: 'organizations',
      label: 'member_put',
      method: 'PUT',
      path: '/api/v1/organizations/:id/members/:user_id',
      access: 'authenticated',
      summary: 'Add a member or set their roles (admin or org:members:manage; 201 added, 200 changed)',
      schema: {
        params: MemberParams,
        body: PutMemberBody,
        response: { 200: MemberSchema, 201: MemberSchema },
      },
      statusOf: answer.status,
      handler: async (req) => {
        const { created, member } = await putMember(
          ctx,
          req.params.id,
          req.params.user_id,
          req.body.roles,
          callerOf(req),
        );
        return answer.mark(member, created);
      },
    }),
    endpoint({
      group: 'organizations',
      label: 'member_delete',
      method: 'DELETE',
      path: '/api/v1/organizations/:id/members/:user_id',
      access: 'authenticated',
      summary: 'Remove a member (admin or org:members:manage), or leave',
      schema: { params: MemberParams, response: { 204: Type.Null() } },
      status: 204,
      handler: async (req) => {
        await deleteMember(ctx, req.params.id, req.params.user_id, callerOf(req));
      },
    }),
  ];
}
