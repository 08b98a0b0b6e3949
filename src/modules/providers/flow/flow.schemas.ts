import { Type } from '@sinclair/typebox';

/* The redirect flow's and the identities' schemas (docs/api.md §18). */

export const StartQuery = Type.Object(
  { return_to: Type.Optional(Type.String({ maxLength: 2048 })) },
  { additionalProperties: false },
);

/** The callback's parameters (query or form_post body); the flow itself reads the raw request. */
export const CallbackFields = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 512 })),
    error: Type.Optional(Type.String({ maxLength: 256 })),
    error_description: Type.Optional(Type.String({ maxLength: 2048 })),
    error_uri: Type.Optional(Type.String({ maxLength: 2048 })),
    iss: Type.Optional(Type.String({ maxLength: 512 })),
    session_state: Type.Optional(Type.String({ maxLength: 512 })),
    scope: Type.Optional(Type.String({ maxLength: 2048 })),
    authuser: Type.Optional(Type.String({ maxLength: 64 })),
    hd: Type.Optional(Type.String({ maxLength: 253 })),
    prompt: Type.Optional(Type.String({ maxLength: 64 })),
    user: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);

/** A linked identity as its owner (and admins) see it. */
export const IdentitySchema = Type.Object({
  id: Type.String(),
  provider: Type.Union([Type.String(), Type.Null()]),
  display_name: Type.Union([Type.String(), Type.Null()]),
  issuer: Type.String(),
  subject: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  linked_at: Type.String(),
});
export const IdentityList = Type.Object({ data: Type.Array(IdentitySchema) });
export const IdentityParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/** `DELETE /idp/identities/<id>` and `GET /idp/<name>/link` take a fresh proof of docs/api.md §16. */
export { FreshProofBody } from '../../../identity/index.ts';

/** `GET /idp/<name>/link`: where the page sends the browser next (no token in it). */
export const LinkResponse = Type.Object({ authorization_url: Type.String() });

/** `POST /idp/continue`: the pending second factor of a provider sign-in, for the sign-in page. */
export const ContinueResponse = Type.Object({
  mfa_token: Type.String(),
  methods: Type.Array(Type.String()),
  return_to: Type.String(),
});
