import { Type } from '@sinclair/typebox';
import { type Endpoint, endpoint } from '../../http/endpoint.ts';
import { clientInfo } from '../../identity/index.ts';
import type { AppContext } from '../../kernel/context.types.ts';
import { EmailInput, MessageResponse, PasswordInput } from '../recovery/index.ts';
import { signup } from './registration.service.ts';

const SignupBody = Type.Object(
  {
    email: EmailInput,
    password: PasswordInput,
    // Free text without control characters (it travels in mail headers and logs).
    name: Type.Optional(Type.String({ maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$' })),
  },
  { additionalProperties: false },
);

/** The registration module (docs/api.md §12): public self sign-up, off unless an operator turns it on. */
export function registrationEndpoints(ctx: AppContext): Endpoint[] {
  return [
    endpoint({
      group: 'auth',
      label: 'signup',
      method: 'POST',
      path: '/api/v1/signup',
      access: 'public',
      summary: 'Sign up with e-mail and password (always 202; the address is confirmed by mail)',
      schema: { body: SignupBody, response: { 202: MessageResponse } },
      status: 202,
      handler: (req) => signup(ctx, req.body, clientInfo(req)),
    }),
  ];
}
