import { Type } from 'typebox';
import { PARAM_CONDITIONS } from './kernel.ts';

export const DELEGATION_CHAIN_IDS = [8453, 84532] as const;
export const DELEGATION_MAX_CALLS = 32;
export const DELEGATION_LIST_DEFAULT_LIMIT = 50;
export const DELEGATION_LIST_MAX_LIMIT = 200;
/** Unix seconds fit the timestamp policy's uint48. */
const UINT48_MAX = 2 ** 48 - 1;

const ADDRESS = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const HEX = Type.String({ pattern: '^0x[0-9a-fA-F]*$' });

export const DelegationCallSchema = Type.Object(
  {
    target: ADDRESS,
    selector: Type.String({ pattern: '^0x[0-9a-fA-F]{8}$' }),
    /** Wei per call, digits only (uint256). */
    value_limit: Type.String({ pattern: '^[0-9]{1,78}$' }),
  },
  { additionalProperties: false },
);

export const RateLimitSchema = Type.Object(
  {
    count: Type.Integer({ minimum: 1, maximum: UINT48_MAX }),
    interval_secs: Type.Optional(Type.Integer({ minimum: 0, maximum: UINT48_MAX })),
  },
  { additionalProperties: false },
);

export const PrepareBody = Type.Object(
  {
    account: ADDRESS,
    chain_id: Type.Union(DELEGATION_CHAIN_IDS.map((c) => Type.Literal(c))),
    calls: Type.Array(DelegationCallSchema, { minItems: 1, maxItems: DELEGATION_MAX_CALLS }),
    valid_after: Type.Optional(Type.Integer({ minimum: 0, maximum: UINT48_MAX })),
    valid_until: Type.Integer({ minimum: 1, maximum: UINT48_MAX }),
    rate_limit: Type.Optional(RateLimitSchema),
  },
  { additionalProperties: false },
);

export const ConfirmBody = Type.Object(
  {
    enable_sig: HEX,
    owner: Type.Optional(ADDRESS),
    index: Type.Optional(
      Type.String({
        pattern: '^(0|[1-9][0-9]{0,77})$',
        description:
          "The account's Kernel factory index (salt), a decimal uint256; default 0. Used only while the account is not deployed.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const RenewBody = Type.Object(
  { valid_until: Type.Optional(Type.Integer({ minimum: 1, maximum: UINT48_MAX })) },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ListQuery = Type.Object(
  {
    account: Type.Optional(ADDRESS),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: DELEGATION_LIST_MAX_LIMIT,
        default: DELEGATION_LIST_DEFAULT_LIMIT,
      }),
    ),
  },
  { additionalProperties: false },
);

const STAMP = Type.String({ format: 'date-time' });
const NULLABLE_STAMP = Type.Union([STAMP, Type.Null()]);

/** A call policy parameter rule (docs/delegations.md); conditions in ZeroDev CallPolicy's order. */
export const ParamRuleSchema = Type.Object({
  condition: Type.Union(PARAM_CONDITIONS.map((c) => Type.Literal(c))),
  offset: Type.Integer({ description: 'Byte offset of the 32-byte word from the start of the arguments.' }),
  params: Type.Array(Type.String({ pattern: '^0x[0-9a-f]{64}$' })),
});

export const GrantedCallSchema = Type.Object({
  target: Type.String(),
  selector: Type.String(),
  value_limit: Type.String(),
  rules: Type.Array(ParamRuleSchema, {
    description:
      'Parameter rules the service added: an approval names only venue contracts, a swap pays the account.',
  }),
});

export const ScopeSchema = Type.Object({
  calls: Type.Array(GrantedCallSchema),
  valid_after: Type.Integer(),
  valid_until: Type.Integer(),
  rate_limit: Type.Union([
    Type.Object({ count: Type.Integer(), interval_secs: Type.Integer() }),
    Type.Null(),
  ]),
});

export const TypedDataSchema = Type.Object({
  domain: Type.Object({
    name: Type.String(),
    version: Type.String(),
    chainId: Type.Integer(),
    verifyingContract: Type.String(),
  }),
  types: Type.Object({
    Enable: Type.Array(Type.Object({ name: Type.String(), type: Type.String() })),
  }),
  primaryType: Type.Literal('Enable'),
  message: Type.Object({
    validationId: Type.String(),
    nonce: Type.Integer(),
    hook: Type.String(),
    validatorData: Type.String(),
    hookData: Type.String(),
    selectorData: Type.String(),
  }),
});

export const DelegationSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    account: Type.String(),
    chain_id: Type.Integer(),
    status: Type.Union([
      Type.Literal('prepared'),
      Type.Literal('active'),
      Type.Literal('revoked'),
      Type.Literal('expired'),
    ]),
    permission_id: Type.String(),
    validation_id: Type.String(),
    enable_data: Type.String(),
    kernel_nonce: Type.Integer(),
    digest: Type.String({
      description: 'The EIP-712 hash of `typed_data`: the single value the owner signs.',
    }),
    session_key: Type.String(),
    scope: ScopeSchema,
    account_deployed: Type.Boolean(),
    valid_until: STAMP,
    created_at: STAMP,
    confirmed_at: NULLABLE_STAMP,
    revoked_at: NULLABLE_STAMP,
    owner: Type.Union([Type.String(), Type.Null()], {
      description: "The account's ECDSA owner whose signature confirmed the grant; null until confirmed.",
    }),
    account_index: Type.Union([Type.String(), Type.Null()], {
      description:
        'The Kernel factory index the account was derived at, when it was not deployed at confirm (its first delegated operation deploys it); else null.',
    }),
    kernel_version: Type.String(),
    selector_data: Type.String(),
    typed_data: TypedDataSchema,
    modules: Type.Object({
      ecdsa_signer: Type.String(),
      call_policy: Type.String(),
      timestamp_policy: Type.String(),
      rate_limit_policy: Type.Union([Type.String(), Type.Null()]),
    }),
    policy_version: Type.Integer(),
    renewed_from: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'Delegation' },
);

export const DelegationListSchema = Type.Object({ delegations: Type.Array(DelegationSchema) });

const CALL = Type.Object({ to: Type.String(), data: Type.String() });

export const RevocationSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: Type.Literal('revoked'),
    revocation: Type.Object({
      uninstall_call: CALL,
      invalidate_nonce_call: CALL,
      note: Type.String(),
    }),
  },
  { title: 'DelegationRevocation' },
);
