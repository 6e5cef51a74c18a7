import { AppError } from '../../core/errors/app-error.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { formatBalanceUsd, readPrepaidBalance } from './prepaid.ts';
import { BalanceResponse } from './schemas.ts';

export const billingRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/balance',
    operationId: 'getBalance',
    summary: "The account's prepaid USD balance",
    description:
      'Metered fees are debited from this balance; a fee it does not cover answers 402 PAYMENT_REQUIRED ' +
      'pointing at POST /v1/balance/topups. `balance_usd` is a decimal string with exactly six decimals ' +
      '(micro-USD); an account that never topped up has "0.000000".',
    tags: ['balance'],
    class: 'bearer',
    scope: 'read',
    wallet: false,
    schema: { response: { 200: BalanceResponse } },
    handler: async ({ deps, principal }) => {
      if (!principal) throw new AppError('UNAUTHORIZED', 'This route needs a bearer credential.');
      const { balanceMicro } = await readPrepaidBalance(deps.db, principal.accountId);
      return { status: 200, body: { balance_usd: formatBalanceUsd(balanceMicro), currency: 'USD' } };
    },
  }),
];
