import { Type } from 'typebox';

export const ScreeningRequest = Type.Object(
  {
    address: Type.String({
      pattern: '^0x[0-9a-fA-F]{40}$',
      description: 'The wallet address to screen: 0x followed by 40 hex characters, any case',
    }),
  },
  { additionalProperties: false },
);

export const ScreeningResponse = Type.Object(
  {
    address: Type.String({ description: 'The address as submitted' }),
    sanctioned: Type.Boolean(),
    lists: Type.Array(Type.String(), { description: 'The lists naming the address, such as `OFAC SDN`' }),
    provider_count: Type.Integer({ description: 'How many screening providers were consulted' }),
  },
  { additionalProperties: false, title: 'ScreeningResult' },
);
