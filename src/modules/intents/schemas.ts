import { Type } from 'typebox';
import { offsetParam } from '../../core/http/paging.ts';

export const INTENT_LIST_DEFAULT_LIMIT = 50;
export const INTENT_LIST_MAX_LIMIT = 200;

const ADDRESS = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const KINDS = ['conversion', 'gas_topup'] as const;
const STATUSES = ['planned', 'executing', 'filled', 'cancelled', 'aborted'] as const;

/** A token as a request may name it: an address, or a registry symbol (`USDC`, `USDC.e`). */
const TOKEN_PATTERN = '^(0x[0-9a-fA-F]{40}|[A-Za-z][A-Za-z0-9.]{0,19})$';

export const CreateIntentBody = Type.Object(
  {
    wallet: ADDRESS,
    kind: Type.Union(KINDS.map((k) => Type.Literal(k))),
    sell_token: Type.String({
      pattern: TOKEN_PATTERN,
      description:
        "A registry token of the policy's chain, by address or symbol (as GET /v1/tokens lists it; the " +
        "intent stores the address); for a gas top-up the chain's wrapped native token.",
    }),
    buy_token: Type.String({
      pattern: TOKEN_PATTERN,
      description:
        'A registry token of the chain, by address or symbol; for a gas top-up the native placeholder ' +
        '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE.',
    }),
    sell_amount: Type.String({
      pattern: '^[1-9][0-9]{0,77}$',
      description: 'Base units of the sell token (wei for a gas top-up), a positive decimal integer.',
    }),
    max_slippage_bps: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000,
        description: "Default: the policy's execution.max_slippage_bps, which it may not exceed.",
      }),
    ),
    venues: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: 16,
        uniqueItems: true,
        description: "Narrows the policy's execution.venues; may not name a venue outside it.",
      }),
    ),
  },
  { additionalProperties: false },
);

export const IntentSchema = Type.Object(
  {
    id: Type.String(),
    wallet: Type.String(),
    kind: Type.Union(KINDS.map((k) => Type.Literal(k))),
    status: Type.Union(STATUSES.map((s) => Type.Literal(s))),
    policy_version: Type.Integer(),
    policy_hash: Type.String(),
    params: Type.Object(
      {
        chain_id: Type.Integer(),
        sell_token: Type.String(),
        buy_token: Type.String(),
        sell_amount: Type.String(),
        max_slippage_bps: Type.Integer(),
        venues: Type.Array(Type.String()),
        value_usd: Type.String(),
        fee_usd: Type.String(),
        abort: Type.Optional(
          Type.Object({ reason: Type.String(), detail: Type.Unknown() }, { additionalProperties: false }),
        ),
      },
      { additionalProperties: false },
    ),
    report: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          "The executor's account of the run ({} until it starts): `plan` (venue, slice amounts, interval, " +
          'impact), `slices` (each settled slice: venue, state, amounts from its logs, quoted and minimum, ' +
          'venue fee, price against the reference, UserOperation and transaction hashes, gas, timings), ' +
          '`totals` (sold, bought, gas, average price, the USD value filled once ended) and `continuations`. ' +
          "See docs/executor.md. An intent above its policy's approval threshold also carries `approval` " +
          '(an IntentApproval: quorum, approvers, signatures, state, expires_at, typed_data, digest; ' +
          'docs/policies.md, "Approvals").',
      },
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, title: 'Intent' },
);

export const IntentListSchema = Type.Object(
  { intents: Type.Array(IntentSchema) },
  { additionalProperties: false },
);

export const IntentIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ListIntentsQuery = Type.Object(
  {
    wallet: Type.Optional(ADDRESS),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: INTENT_LIST_MAX_LIMIT })),
    offset: Type.Optional(offsetParam()),
  },
  { additionalProperties: false },
);

/** The body of POST /v1/intents/{id}/approvals: an approver's EIP-712 signature. */
export const ApprovalBody = Type.Object(
  {
    approver: Type.String({
      pattern: '^0x[0-9a-fA-F]{40}$',
      description: "One of the policy's spend.approvals.approvers: an EOA or a smart account",
    }),
    signature: Type.String({
      pattern: '^0x[0-9a-fA-F]+$',
      maxLength: 16_386,
      description:
        "The approver's signature over report.approval.typed_data (EIP-712): 65-byte ECDSA, ERC-1271, or " +
        'ERC-6492-wrapped for an undeployed account',
    }),
  },
  { additionalProperties: false },
);

/** An intent's `report.approval`, and the answer of POST /v1/intents/{id}/approvals. */
export const ApprovalSchema = Type.Object(
  {
    quorum: Type.Integer({ minimum: 1 }),
    approvers: Type.Array(Type.String()),
    signatures: Type.Array(
      Type.Object({ approver: Type.String(), signed_at: Type.String({ format: 'date-time' }) }),
    ),
    state: Type.Union([Type.Literal('waiting'), Type.Literal('approved'), Type.Literal('expired')]),
    expires_at: Type.String({ format: 'date-time' }),
    digest: Type.String({ pattern: '^0x[0-9a-f]{64}$' }),
    typed_data: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false, title: 'IntentApproval' },
);
