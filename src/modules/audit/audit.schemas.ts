import { type TLiteral, Type } from '@sinclair/typebox';
import { AUDIT_ACTIONS, type AuditAction } from '../../identity/index.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const AuditQuery = Type.Object(
  {
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Actor user id' })),
    target: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Target id' })),
    action: Type.Optional(
      Type.Union(
        AUDIT_ACTIONS.map((a): TLiteral<AuditAction> => Type.Literal(a)),
        { description: 'One action, e.g. login.failure' },
      ),
    ),
    outcome: Type.Optional(Type.Union([Type.Literal('success'), Type.Literal('failure')])),
    from: Type.Optional(
      Type.String({ format: 'date-time', description: 'Inclusive lower bound (ISO 8601)' }),
    ),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Exclusive upper bound (ISO 8601)' })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const AuditEntry = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time' }),
  action: Type.String(),
  outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
  actor_type: Type.Union([Type.Literal('user'), Type.Literal('system'), Type.Literal('anonymous')]),
  actor_id: Nullable(Type.String()),
  actor_email: Nullable(
    Type.String({ description: "The actor's current address; null once the account is gone" }),
  ),
  target_type: Nullable(Type.String()),
  target_id: Nullable(Type.String()),
  target_email: Nullable(
    Type.String({ description: "The target user's current address; null for other targets or once gone" }),
  ),
  ip: Nullable(Type.String()),
  user_agent: Nullable(Type.String()),
  details: Type.Record(Type.String(), Type.Unknown()),
});

export const AuditPage = Type.Object({
  data: Type.Array(AuditEntry),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
