import { Type } from 'typebox';

export const KEY_SCOPES = ['read', 'write', 'admin', 'supervisor'] as const;
export const KEY_STATUSES = ['active', 'revoked', 'expired'] as const;
export const MAX_NAME_LENGTH = 100;
export const MAX_ALLOWED_IPS = 32;
export const MAX_WALLETS = 100;
export const MAX_AGENTS = 100;
export const MAX_ROTATE_IDS = 100;
export const MIN_EXPIRES_IN_DAYS = 1;
export const MAX_EXPIRES_IN_DAYS = 365;
export const DEFAULT_EXPIRES_IN_DAYS = 90;
export const MAX_OVERLAP_SECONDS = 604_800;

const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';

const Scope = Type.Enum([...KEY_SCOPES]);
const Name = Type.String({
  minLength: 1,
  maxLength: MAX_NAME_LENGTH,
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
  description: 'A label for people; no control characters.',
});
const Scopes = Type.Array(Scope, {
  minItems: 1,
  maxItems: KEY_SCOPES.length,
  uniqueItems: true,
  description: "Default ['read'].",
});
const ExpiresInDays = Type.Integer({
  minimum: MIN_EXPIRES_IN_DAYS,
  maximum: MAX_EXPIRES_IN_DAYS,
  description: `Default ${DEFAULT_EXPIRES_IN_DAYS}.`,
});
const Wallet = Type.String({ pattern: ADDRESS_PATTERN });
const Timestamp = Type.String({ format: 'date-time' });
const KeyId = Type.String({ minLength: 1, maxLength: 100 });
const NullableStrings = Type.Union([Type.Array(Type.String()), Type.Null()]);

export const CreateKeyBody = Type.Object(
  {
    name: Type.Optional(Name),
    scopes: Type.Optional(Scopes),
    expires_in_days: Type.Optional(ExpiresInDays),
    allowed_ips: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: MAX_ALLOWED_IPS,
        uniqueItems: true,
        description: 'IPv4 or IPv6 addresses or CIDR blocks. Omit for any address.',
      }),
    ),
    wallets: Type.Optional(
      Type.Array(Wallet, {
        minItems: 1,
        maxItems: MAX_WALLETS,
        description: 'Wallet pin (stored lowercased). Omit for an account-wide key.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const EnrollKeysBody = Type.Object(
  {
    agents: Type.Array(
      Type.Object(
        {
          wallet: Wallet,
          name: Type.Optional(Name),
          scopes: Type.Optional(Scopes),
          expires_in_days: Type.Optional(ExpiresInDays),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_AGENTS },
    ),
  },
  { additionalProperties: false },
);

export const RotateKeysBody = Type.Object(
  {
    key_ids: Type.Array(KeyId, {
      minItems: 1,
      maxItems: MAX_ROTATE_IDS,
      uniqueItems: true,
    }),
    overlap_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_OVERLAP_SECONDS,
        description: 'How long the old key keeps working (never past its own expiry). Default 0.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const KeyIdParams = Type.Object({ id: KeyId }, { additionalProperties: false });

/** The spec's create response; `token` is null only in an Idempotency-Key replay. */
export const CreatedKeySchema = Type.Object(
  {
    id: Type.String(),
    token: Type.Union([Type.String(), Type.Null()], {
      description: 'The raw token, returned exactly once; null in an Idempotency-Key replay.',
    }),
    name: Type.Union([Type.String(), Type.Null()]),
    scopes: Type.Array(Scope),
    created_at: Timestamp,
    expires_at: Timestamp,
    allowed_ips: NullableStrings,
    wallets: NullableStrings,
  },
  { additionalProperties: false, title: 'ApiKey' },
);

const ReplayRemediation = Type.Optional(
  Type.String({ description: 'Present only in an Idempotency-Key replay, whose tokens are null.' }),
);

export const CreateKeyResponse = Type.Object(
  { ...CreatedKeySchema.properties, remediation: ReplayRemediation },
  { additionalProperties: false },
);

export const EnrollKeysResponse = Type.Object(
  { keys: Type.Array(CreatedKeySchema), remediation: ReplayRemediation },
  { additionalProperties: false },
);

export const RotateKeysResponse = Type.Object(
  {
    rotated: Type.Array(
      Type.Object(
        {
          old_id: Type.String(),
          old_expires_at: Type.String({
            format: 'date-time',
            description: 'When the old key stops working: now, or the end of the overlap.',
          }),
          new: CreatedKeySchema,
        },
        { additionalProperties: false },
      ),
    ),
    remediation: ReplayRemediation,
  },
  { additionalProperties: false },
);

export const ListedKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    scopes: Type.Array(Scope),
    created_at: Timestamp,
    expires_at: Timestamp,
    allowed_ips: NullableStrings,
    wallets: NullableStrings,
    status: Type.Union(KEY_STATUSES.map((s) => Type.Literal(s))),
    revoked_at: Type.Union([Timestamp, Type.Null()]),
    rotated_from: Type.Union([Type.String(), Type.Null()]),
    rotated_to: Type.Union([Type.String(), Type.Null()]),
    created_by: Type.String({ description: '`session:<id>` or `key:<id>`.' }),
    last_used_at: Type.Union([Timestamp, Type.Null()]),
  },
  { additionalProperties: false },
);

export const ListKeysResponse = Type.Object(
  { keys: Type.Array(ListedKeySchema) },
  { additionalProperties: false },
);

export const RevokeKeyResponse = Type.Object(
  { id: Type.String(), revoked: Type.Literal(true) },
  { additionalProperties: false },
);
