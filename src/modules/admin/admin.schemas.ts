import { type Static, Type } from '@sinclair/typebox';

export const ModuleObject = Type.Object({
  name: Type.String(),
  enabled: Type.Boolean(),
  required: Type.Boolean(),
  description: Type.String(),
  endpoints: Type.Array(Type.String()),
});
export type ModuleObject = Static<typeof ModuleObject>;

export const ModuleList = Type.Object({ data: Type.Array(ModuleObject) });
export type ModuleList = Static<typeof ModuleList>;

export const ModuleParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });
export type ModuleParams = Static<typeof ModuleParams>;

/** `force` (docs/api.md §16): switch off `mfa` or `passkeys` although accounts hold their factors. */
export const ToggleBody = Type.Object(
  { enabled: Type.Boolean(), force: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type ToggleBody = Static<typeof ToggleBody>;
