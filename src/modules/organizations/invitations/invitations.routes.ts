import { type Endpoint, endpoint } from '../../../http/endpoint.ts';
import { createAuthenticator, optionalCaller } from '../../../http/guard.ts';
import { clientInfo } from '../../../identity/index.ts';
import type { AppContext } from '../../../kernel/context.types.ts';
import { callerOf } from '../caller.ts';
import { acceptOrganizationInvitation, viewOrganizationInvitation } from './accept.service.ts';
import {
  AcceptBody,
  AcceptResponse,
  InvitationTokenParams,
  OrgInvitationList,
  OrgInvitationParams,
  OrgInvitationView,
  OrgInviteBody,
  OrgInviteResponse,
  OrgParams,
} from './invitations.schemas.ts';
import {
  deleteOrganizationInvitation,
  inviteToOrganization,
  organizationInvitations,
} from './invitations.service.ts';

/** Invitations to an organization (docs/api.md §21): invite, list, revoke, show, accept. */
export function invitationEndpoints(ctx: AppContext): Endpoint[] {
  // The accept is public (a new person has no account yet), but a Bearer caller accepts as themself.
  const authenticate = createAuthenticator(ctx.accessTokens, ctx.sessions, ctx.config.requireMfa);
  return [
    endpoint({
      group: 'organizations',
      label: 'invite',
      method: 'POST',
      path: '/api/v1/organizations/:id/invitations',
      access: 'authenticated',
      summary: 'Invite an address to an organization (admin or org:members:manage; only roles you hold)',
      schema: { params: OrgParams, body: OrgInviteBody, response: { 201: OrgInviteResponse } },
      status: 201,
      handler: (req) => inviteToOrganization(ctx, callerOf(req), req.params.id, req.body),
    }),
    endpoint({
      group: 'organizations',
      label: 'invitations',
      method: 'GET',
      path: '/api/v1/organizations/:id/invitations',
      access: 'authenticated',
      summary: "An organization's pending invitations (never a token or a link)",
      schema: { params: OrgParams, response: { 200: OrgInvitationList } },
      handler: (req) => organizationInvitations(ctx, callerOf(req), req.params.id),
    }),
    endpoint({
      group: 'organizations',
      label: 'invitation_delete',
      method: 'DELETE',
      path: '/api/v1/organizations/:id/invitations/:invitation_id',
      access: 'authenticated',
      summary: 'Revoke a pending invitation (its link then answers 410 invitation_used)',
      schema: { params: OrgInvitationParams },
      status: 204,
      handler: (req) =>
        deleteOrganizationInvitation(ctx, callerOf(req), req.params.id, req.params.invitation_id),
    }),
    endpoint({
      group: 'organizations',
      label: 'invitation_get',
      method: 'GET',
      path: '/api/v1/organization-invitations/:token',
      access: 'public',
      summary: 'Show an invitation to an organization (reads only: opening the link never uses it up)',
      schema: { params: InvitationTokenParams, response: { 200: OrgInvitationView } },
      // The answer is about a bearer secret: keep it out of shared caches and history.
      cacheControl: 'no-store',
      handler: (req) => viewOrganizationInvitation(ctx, req.params.token, clientInfo(req)),
    }),
    endpoint({
      group: 'organizations',
      label: 'invitation_accept',
      method: 'POST',
      path: '/api/v1/organization-invitations/:token/accept',
      access: 'public',
      issuesTokens: true,
      summary:
        'Accept an invitation: signed in as the invited address (the membership), or {password, name?} to create the account (tokens)',
      schema: { params: InvitationTokenParams, body: AcceptBody, response: { 200: AcceptResponse } },
      handler: async (req) =>
        acceptOrganizationInvitation(
          ctx,
          req.params.token,
          await optionalCaller(req, authenticate),
          req.body ?? null,
          clientInfo(req),
        ),
    }),
  ];
}
