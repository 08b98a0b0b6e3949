import { type Static, Type } from '@sinclair/typebox';
import { Cursor, Limit } from './organizations.schemas.ts';
import { RoleNames } from './roles.schemas.ts';

export const MemberSchema = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.String(), name: Type.String(), status: Type.String() }),
  roles: Type.Array(Type.String()),
  joined_at: Type.String(),
});
export type PublicMember = Static<typeof MemberSchema>;

export const MemberPage = Type.Object({
  data: Type.Array(MemberSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
export type MemberPage = Static<typeof MemberPage>;

export const MembersQuery = Type.Object(
  { limit: Limit, cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);
export type MembersQuery = Static<typeof MembersQuery>;

export const MemberParams = Type.Object({
  id: Type.String({ maxLength: 512 }),
  user_id: Type.String({ maxLength: 512 }),
});

export const PutMemberBody = Type.Object({ roles: RoleNames }, { additionalProperties: false });
