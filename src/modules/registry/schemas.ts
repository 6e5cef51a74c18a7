import { Type } from 'typebox';

const AddressSchema = Type.String({
  pattern: '^0x[0-9a-fA-F]{40}$',
  description: 'EIP-55 checksummed address',
});

export const TokensQuery = Type.Object(
  {
    chain_id: Type.Optional(
      Type.String({
        pattern: '^[0-9]+$',
        maxLength: 20,
        description: 'Digits only. Omit to list every supported chain; an unsupported chain is a 400.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RegistryChainSchema = Type.Object(
  {
    chain_id: Type.Integer(),
    name: Type.String(),
    wrapped_native: AddressSchema,
    explorer_url: Type.Union([Type.String(), Type.Null()], {
      description:
        "The chain's block explorer as configured here (EXPLORER_URL_<chain_id>); a transaction is at " +
        '`<explorer_url>/tx/<hash>`. Null when none is configured.',
    }),
    venues: Type.Array(
      Type.Object({
        name: Type.String(),
        settles: Type.Boolean({ description: 'Whether this venue settles token conversions on this chain' }),
        contracts: Type.Array(AddressSchema, {
          description:
            "The venue's contracts on this chain (its routers and allowance targets): what a delegation for " +
            'conversions on it allows the executor to call, and the only spenders an approve may name. Empty ' +
            'when the venue is not configured here.',
        }),
      }),
    ),
    tokens: Type.Array(
      Type.Object({
        symbol: Type.String({ description: 'The exact UPPERCASE string spend.token_allowlist carries' }),
        address: AddressSchema,
        decimals: Type.Integer(),
        stable: Type.Boolean({ description: 'USD-pegged and valued 1:1 (a euro-pegged token is false)' }),
      }),
    ),
  },
  { additionalProperties: false, title: 'TokenRegistryEntry' },
);

export const TokensResponse = Type.Object(
  { chains: Type.Array(RegistryChainSchema) },
  { additionalProperties: false },
);
