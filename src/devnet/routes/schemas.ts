import { Type } from 'typebox';

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'EVM address' });
const BaseUnits = Type.String({ pattern: '^(0|[1-9][0-9]{0,77})$', description: 'amount in base units' });

/** Test tokens to mint, by devnet symbol (any case), in base units. */
const FaucetTokens = Type.Array(
  Type.Object(
    { symbol: Type.String({ minLength: 1, maxLength: 16 }), amount: BaseUnits },
    { additionalProperties: false },
  ),
  { maxItems: 8 },
);

export const FaucetRequest = Type.Object(
  {
    chain_id: Type.Integer({ description: 'A devnet chain id' }),
    address: Address,
    eth_wei: Type.Optional(BaseUnits),
    tokens: Type.Optional(FaucetTokens),
  },
  { additionalProperties: false },
);

export const FaucetResponse = Type.Object({
  chain_id: Type.Integer(),
  address: Address,
  tx_hashes: Type.Array(Type.String()),
  balances: Type.Object({
    eth_wei: Type.String(),
    tokens: Type.Record(Type.String(), Type.String()),
  }),
});

export const PriceFeedMoveRequest = Type.Object(
  {
    chain_id: Type.Integer({ description: 'A devnet chain id' }),
    pair: Type.String({
      pattern: '^[A-Za-z0-9.]{1,16} ?/ ?[A-Za-z0-9.]{1,16}$',
      description: 'Feed pair, e.g. ETH/USD',
    }),
    answer: Type.String({
      pattern: '^-?(0|[1-9][0-9]{0,30})(\\.[0-9]{1,18})?$',
      description:
        'The new price in USD as a decimal string; zero or negative makes the feed unusable on purpose',
    }),
    updated_at: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1_000_000_000_000,
        description: 'Unix seconds to stamp the round with (an old stamp makes the feed stale); default: now',
      }),
    ),
  },
  { additionalProperties: false },
);

export const PriceFeedMoveResponse = Type.Object({
  chain_id: Type.Integer(),
  pair: Type.String(),
  address: Address,
  decimals: Type.Integer(),
  answer: Type.String({ description: 'The posted answer in USD' }),
  answer_raw: Type.String({ description: 'The answer as the feed holds it (USD × 10^decimals)' }),
  round_id: Type.String(),
  updated_at: Type.Integer(),
  tx_hash: Type.String(),
  reference: Type.Union([
    Type.Object({
      usable: Type.Boolean({ description: 'Whether the service now values through this feed' }),
      refusal: Type.Optional(Type.Object({ kind: Type.String(), message: Type.String() })),
    }),
    Type.Null(),
  ]),
});

export const KernelAccountRequest = Type.Object(
  {
    chain_id: Type.Integer({ description: 'A devnet chain with Kernel: 8453 or 84532' }),
    owner: Address,
    index: Type.Optional(
      Type.String({
        pattern: '^(0|[1-9][0-9]{0,76})$',
        description: 'Account index (the SDK’s `index`), default 0',
      }),
    ),
    deploy: Type.Optional(Type.Boolean({ description: 'Deploy it now (default: leave it counterfactual)' })),
    eth_wei: Type.Optional(BaseUnits),
    tokens: Type.Optional(FaucetTokens),
  },
  { additionalProperties: false },
);

export const KernelAccountResponse = Type.Object({
  chain_id: Type.Integer(),
  address: Address,
  owner: Address,
  index: Type.String(),
  deployed: Type.Boolean(),
  factory: Address,
  implementation: Address,
  ecdsa_validator: Address,
  factory_data: Type.String({
    description: 'The factory call a first UserOperation carries to deploy the account',
  }),
  tx_hashes: Type.Array(Type.String()),
  balances: Type.Object({ eth_wei: Type.String(), tokens: Type.Record(Type.String(), Type.String()) }),
});
