import { Type } from 'typebox';

const Amount = (description: string) => Type.String({ pattern: '^(0|[1-9][0-9]*)$', description });
const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'EIP-55 checksummed address' });

export const QuoteRequestSchema = Type.Object(
  {
    sell_token: Type.String({
      minLength: 1,
      maxLength: 42,
      description: 'The token sold: its address, or its symbol as GET /v1/tokens lists it',
    }),
    buy_token: Type.String({
      minLength: 1,
      maxLength: 42,
      description: 'The token bought: its address, or its symbol as GET /v1/tokens lists it',
    }),
    sell_amount: Type.String({
      pattern: '^[1-9][0-9]*$',
      maxLength: 78,
      description: 'Base units of the sell token: a positive integer without a leading zero',
    }),
    chain_id: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 2 ** 31 - 1, default: 8453, description: 'Default 8453 (Base)' }),
    ),
  },
  { additionalProperties: false },
);

export const QuoteComparisonSchema = Type.Object(
  {
    chain_id: Type.Integer(),
    sell_token: Address,
    buy_token: Address,
    sell_amount: Amount('Base units of the sell token'),
    quoted_at: Type.String({ format: 'date-time' }),
    full_size: Type.Object(
      {
        quotes: Type.Array(
          Type.Object(
            {
              venue: Type.String(),
              buy_amount: Amount(
                'Buy-token base units the venue offers for the whole sell amount, net of its fee',
              ),
              fee_amount: Amount('The venue’s fee, in buy-token base units'),
              expires_at: Type.String({ format: 'date-time' }),
            },
            { additionalProperties: false },
          ),
          {
            minItems: 1,
            description: 'The venues that answered, best first; venues that failed are left out',
          },
        ),
        best_venue: Type.String(),
        best_buy_amount: Amount('The best venue’s buy amount'),
      },
      { additionalProperties: false },
    ),
    sliced_plan: Type.Union(
      [
        Type.Object(
          {
            slice_count: Type.Integer({ minimum: 1 }),
            slice_sell_amount: Amount('Sell amount of each slice (the last takes the remainder)'),
            probe_sell_amount: Amount('Size of the small probe quote'),
            probe_buy_amount: Amount('What the probe was quoted'),
            impact_bps_at_full_size: Type.Number(),
            interval_ms: Type.Integer({ minimum: 0 }),
            estimated_buy_total: Amount('What the slices should fetch if the price recovers between them'),
            venue: Type.String({
              description: 'The venue of the first slice; when it is split, the one with the larger share',
            }),
            split: Type.Union(
              [
                Type.Object(
                  {
                    parts: Type.Array(
                      Type.Object(
                        {
                          venue: Type.String(),
                          sell_amount: Amount('The part of the first slice this venue takes'),
                          buy_amount: Amount('What the venue quoted for it'),
                        },
                        { additionalProperties: false },
                      ),
                      { minItems: 2, maxItems: 2 },
                    ),
                    gain: Amount(
                      'What the two parts buy more than the first slice on its venue alone (buy-token base units)',
                    ),
                    gas_cost: Amount(
                      'What the second swap’s gas costs now, valued in the buy token: the gain had to beat it',
                    ),
                  },
                  { additionalProperties: false },
                ),
                Type.Null(),
              ],
              {
                description:
                  'How the executor would cut the first slice between the two best venues in one operation; null when one venue alone does better once gas is paid',
              },
            ),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The planner’s preview: null when it refused (see planner_abort)' },
    ),
    expected_savings: Type.Union(
      [
        Type.Object(
          { buy_amount: Amount('Estimated total minus the best full-size fill'), bps: Type.Number() },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'Null for a single slice or a refusal' },
    ),
    planner_abort: Type.Union([
      Type.Object(
        {
          reason: Type.String({
            description: 'An intent abort reason (section 7 of the spec; docs/execution.md)',
          }),
          detail: Type.Object({}, { additionalProperties: true }),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ]),
    assumed_max_slippage_bps: Type.Integer({
      description: 'The platform default policy’s execution.max_slippage_bps, which the preview plans with',
    }),
    metered_fee: Type.Object(
      {
        product: Type.Literal('conversion'),
        estimated_fee_usd: Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$' }),
        basis: Type.String(),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'QuoteComparison' },
);
