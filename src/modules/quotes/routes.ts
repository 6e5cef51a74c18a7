import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { QuoteComparisonSchema, QuoteRequestSchema } from './schemas.ts';
import { compareQuotes } from './service.ts';

/** Said on every answer: the figures are live quotes and a planner preview, not an offer. */
export const QUOTE_ESTIMATE_HEADER =
  "estimate; venue quotes expire at expires_at and sliced_plan and expected_savings are the planner's preview";

export const quotesRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'POST',
    url: '/v1/quotes',
    operationId: 'compareQuotes',
    summary: 'Compare the venues for a token conversion, and preview how the planner would execute it',
    description:
      'Free and rate limited per IP. Every venue that settles on the chain is asked for the full size at once; ' +
      '`full_size` lists those that answered, best first. `sliced_plan` is the planner that executes intents, in ' +
      'preview: one extra small probe quote on the best venue, slices sized against half of ' +
      '`assumed_max_slippage_bps`; when it refuses, `planner_abort` carries the reason. An estimate only: the ' +
      '`x-purser-estimate` header says so on every answer. 502 VENUE_UNAVAILABLE when no venue answered.',
    tags: ['public utilities'],
    class: 'public',
    wallet: false,
    schema: { body: QuoteRequestSchema, response: { 200: QuoteComparisonSchema } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when:
            'the chain is not supported, a token symbol is not on the chain, both tokens are the same, or ' +
            'sell_amount exceeds a uint256',
        },
        { code: 'VENUE_UNAVAILABLE', when: 'no venue answered, or none could be asked on the chain' },
      ],
      responses: { 200: "Every answering venue's full-size quote, best first, and the planner's preview." },
      example: {
        body: { sell_token: 'USDC', buy_token: 'WETH', sell_amount: '5000000000', chain_id: 8453 },
        status: 200,
        response: {
          chain_id: 8453,
          sell_token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
          buy_token: '0x4200000000000000000000000000000000000006',
          sell_amount: '5000000000',
          quoted_at: '2026-03-14T10:15:22.604Z',
          full_size: {
            quotes: [
              {
                venue: 'aerodrome',
                buy_amount: '1652893204511874118',
                fee_amount: '826860032272072',
                expires_at: '2026-03-14T10:15:52.604Z',
              },
            ],
            best_venue: 'aerodrome',
            best_buy_amount: '1652893204511874118',
          },
          sliced_plan: {
            slice_count: 1,
            slice_sell_amount: '5000000000',
            probe_sell_amount: '100000000',
            probe_buy_amount: '33069300000000000',
            impact_bps_at_full_size: 3.46,
            interval_ms: 0,
            estimated_buy_total: '1652893204511874118',
            venue: 'aerodrome',
            split: null,
          },
          expected_savings: null,
          planner_abort: null,
          assumed_max_slippage_bps: 50,
          metered_fee: {
            product: 'conversion',
            estimated_fee_usd: '0.05',
            basis:
              'The published fee per conversion intent (GET /v1/fees), debited when POST /v1/intents admits the ' +
              'order; this quote is free.',
          },
        },
      },
    },
    handler: async ({ deps, body, deadline }) => {
      const comparison = await compareQuotes(
        {
          db: deps.db,
          venues: deps.venues ?? [],
          registry: deps.tokenRegistry,
          prices: deps.prices,
          clock: deps.clock,
          config: deps.config,
          log: deps.log,
          chain: deps.chain,
        },
        {
          chainId: body.chain_id ?? 8453,
          sellToken: body.sell_token,
          buyToken: body.buy_token,
          sellAmount: BigInt(body.sell_amount),
        },
        deadline,
      );
      return {
        status: 200,
        body: comparison,
        headers: { 'x-purser-estimate': QUOTE_ESTIMATE_HEADER, 'cache-control': 'no-store' },
      };
    },
  }),
];
