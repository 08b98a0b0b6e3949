import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { ownCookieValue } from '../../http/pages/index.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import {
  anyDomainClaimed,
  finishSamlFlow,
  landingPage,
  requireSamlConnection,
  SAML_FLOW_COOKIE,
  SAML_FLOW_COOKIE_PATH,
  samlFlowCookie,
  spMetadataXml,
} from '../providers/index.ts';
import { discover } from './discover.service.ts';

const NameParams = Type.Object({ name: Type.String({ maxLength: 64 }) });

/** The HTTP-POST binding's fields (SAML bindings §3.5.4); everything else the IdP sends is ignored. */
const AcsFields = Type.Object({
  SAMLResponse: Type.Optional(Type.String({ maxLength: 60_000 })),
  RelayState: Type.Optional(Type.String({ maxLength: 80 })),
});

const DiscoverBody = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 320 }) },
  { additionalProperties: false },
);
const DiscoverResponse = Type.Object({
  provider: Type.Union([
    Type.Object({ name: Type.String(), display_name: Type.String(), start_url: Type.String() }),
    Type.Null(),
  ]),
});

/** The `sso` module's endpoints (docs/api.md §23): SP metadata, the assertion consumer, discovery. */
export function ssoEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'saml',
      label: 'metadata',
      method: 'GET',
      path: '/saml/:name/metadata',
      access: 'public',
      hidden: true,
      summary: "A SAML connection's service provider metadata, for the IdP's configuration",
      schema: { params: NameParams },
      // XML, not JSON.
      ownsReply: true,
      handler: async (req, reply) => {
        const connection = await requireSamlConnection(ctx, req.params.name);
        return reply
          .header('content-type', 'application/samlmetadata+xml; charset=utf-8')
          .header('cache-control', 'no-cache')
          .send(spMetadataXml(ctx, connection.name));
      },
    }),
    endpoint({
      group: 'saml',
      label: 'acs',
      method: 'POST',
      path: '/saml/:name/acs',
      access: 'public',
      hidden: true,
      issuesTokens: true,
      summary: "The assertion consumer service: the IdP's signed answer, by the HTTP-POST binding",
      schema: { params: NameParams, body: AcsFields },
      // Spends the flow's cookie, sets the session's, and redirects to the landing page.
      ownsReply: true,
      handler: async (req, reply) => {
        const landing = await finishSamlFlow(
          ctx,
          req.params.name,
          {
            samlResponse: req.body.SAMLResponse,
            relayState: req.body.RelayState,
            browserToken: ownCookieValue(ctx, req, SAML_FLOW_COOKIE, SAML_FLOW_COOKIE_PATH),
          },
          clientInfo(req),
        );
        // The flow's cookie is spent whatever happened.
        reply.header('set-cookie', samlFlowCookie(ctx, '', 0));
        return landingPage(ctx, reply, landing);
      },
    }),
    endpoint({
      group: 'idp',
      label: 'address_first',
      method: 'GET',
      path: '/api/v1/idp/address-first',
      access: 'public',
      hidden: true,
      summary:
        'Whether the hosted sign-in asks for the address first (an enabled connection claims a domain)',
      schema: { response: { 200: Type.Object({ address_first: Type.Boolean() }) } },
      handler: async () => ({ address_first: await anyDomainClaimed(ctx) }),
    }),
    endpoint({
      group: 'idp',
      label: 'discover',
      method: 'POST',
      path: '/api/v1/idp/discover',
      access: 'public',
      summary: "Home-realm discovery: the enabled connection claiming an address's domain, or null",
      schema: { body: DiscoverBody, response: { 200: DiscoverResponse } },
      handler: (req) => discover(ctx, req.body.email, req.ip),
    }),
  ];
}
