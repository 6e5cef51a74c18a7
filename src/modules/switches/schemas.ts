import { Type, type TSchema } from 'typebox';
import { SWITCH_SCOPES } from './store.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A switch that is off, as callers and operators see it. */
export const SwitchViewSchema = Type.Object(
  {
    scope: Type.Enum(SWITCH_SCOPES),
    target: Nullable(Type.String({ description: 'null for the environment.' })),
    source: Type.Enum(['operator', 'panic']),
    reason: Type.String({ description: 'Shown to callers refused by this switch.' }),
    set_by: Type.String({
      description: '`operator`, or the credential that panicked (`session:…`, `key:…`).',
    }),
    set_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
