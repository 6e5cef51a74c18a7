import { Type } from 'typebox';
import {
  AlertsSection,
  ExecutionSection,
  FloatSection,
  GasSection,
  POLICY_CHAIN_IDS,
  PolicyDocumentInput,
  PredictionMarketsSection,
  RebalanceSection,
  SpendSection,
  StablesSection,
} from './document.ts';
import { POLICY_LIST_DEFAULT_LIMIT, POLICY_LIST_MAX_LIMIT } from './service.ts';
import { USD_PATTERN } from '../../core/money.ts';

const WALLET = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const CHAIN_ID = Type.Enum(POLICY_CHAIN_IDS);

export const PutPolicyBody = PolicyDocumentInput;

/** A stored document: the input's shape with every section present. */
export const StoredPolicyDocument = Type.Object(
  {
    version: Type.Literal(1),
    wallet: Type.String(),
    chain_id: CHAIN_ID,
    float: FloatSection,
    execution: ExecutionSection,
    gas: GasSection,
    stables: StablesSection,
    spend: SpendSection,
    alerts: AlertsSection,
    prediction_markets: PredictionMarketsSection,
    rebalance: RebalanceSection,
  },
  { additionalProperties: false },
);

export const PolicyRecordSchema = Type.Object(
  {
    wallet: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    hash: Type.String({ description: 'SHA-256 (hex) of the RFC 8785 canonical JSON of `document`' }),
    created_at: Type.String({ format: 'date-time' }),
    unchanged: Type.Optional(Type.Boolean()),
    document: StoredPolicyDocument,
    defaulted: Type.Array(Type.String(), {
      description: 'Sections (`spend`) and fields (`spend.daily_usd`) filled from the platform defaults',
    }),
  },
  { additionalProperties: false, title: 'PolicyRecord' },
);

export const ListPoliciesQuery = Type.Object(
  {
    wallet: Type.Optional(WALLET),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: POLICY_LIST_MAX_LIMIT, default: POLICY_LIST_DEFAULT_LIMIT }),
    ),
  },
  { additionalProperties: false },
);

export const ListPoliciesResponse = Type.Object(
  { policies: Type.Array(PolicyRecordSchema) },
  { additionalProperties: false },
);

export const DefaultsQuery = Type.Object(
  { chain_id: Type.Optional(Type.Integer({ default: 8453 })) },
  { additionalProperties: false },
);

export const DefaultsResponse = Type.Object(
  {
    chain_id: CHAIN_ID,
    sections: Type.Object(
      {
        float: FloatSection,
        execution: ExecutionSection,
        gas: GasSection,
        stables: StablesSection,
        spend: SpendSection,
        alerts: AlertsSection,
        prediction_markets: PredictionMarketsSection,
        rebalance: RebalanceSection,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const SYMBOL = Type.String({ minLength: 1, maxLength: 16 });

export const CheckBody = Type.Object(
  {
    wallet: WALLET,
    kind: Type.Enum(['conversion', 'gas_topup', 'prediction_market_order', 'transfer']),
    amount_usd: Type.String({ pattern: USD_PATTERN, maxLength: 24 }),
    chain_id: Type.Optional(Type.Integer({ description: "Default: the policy's chain" })),
    sell_token: Type.Optional(SYMBOL),
    buy_token: Type.Optional(SYMBOL),
    venue: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    slippage_bps: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    token: Type.Optional(SYMBOL),
    counterparty: Type.Optional(WALLET),
  },
  { additionalProperties: false },
);

const RULE_VALUE = Type.Union([
  Type.String(),
  Type.Integer(),
  Type.Boolean(),
  Type.Array(Type.String()),
  Type.Null(),
]);

export const CheckResponse = Type.Object(
  {
    wallet: Type.String(),
    policy_version: Type.Integer(),
    policy_hash: Type.String(),
    allowed: Type.Boolean(),
    refusal: Type.Union([
      Type.Object(
        { code: Type.String(), rule: Type.String(), message: Type.String() },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    rules: Type.Array(
      Type.Object(
        {
          rule: Type.String(),
          pass: Type.Boolean(),
          limit: RULE_VALUE,
          value: RULE_VALUE,
          code: Type.String(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
