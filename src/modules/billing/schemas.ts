import { Type } from 'typebox';

/** The prepaid balance (spec section 2): USD with exactly six decimals. */
export const BalanceResponse = Type.Object(
  {
    balance_usd: Type.String({ pattern: '^(0|[1-9][0-9]*)\\.[0-9]{6}$', examples: ['12.500000'] }),
    currency: Type.Literal('USD'),
  },
  { additionalProperties: false },
);
