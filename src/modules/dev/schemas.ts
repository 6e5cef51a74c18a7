import { Type } from 'typebox';

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'EVM address' });
const BaseUnits = Type.String({ pattern: '^(0|[1-9][0-9]{0,77})$', description: 'amount in base units' });

export const FaucetRequest = Type.Object(
  {
    chain_id: Type.Integer({ description: 'A devnet chain id' }),
    address: Address,
    eth_wei: Type.Optional(BaseUnits),
    tokens: Type.Optional(
      Type.Array(
        Type.Object(
          { symbol: Type.String({ minLength: 1, maxLength: 16 }), amount: BaseUnits },
          { additionalProperties: false },
        ),
        { maxItems: 8 },
      ),
    ),
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
