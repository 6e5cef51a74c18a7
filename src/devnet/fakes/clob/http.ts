// The CLOB fake's request handling: the failure knobs first (a rate limit answered as the CLOB's
// per-signer limiter does, a server error, a malformed body), then the routes in the CLOB's order:
// public, L1 (API keys), and L2 (the caller's keys, then trading, which the `trading` knob may
// close) after a 404 for a path the CLOB does not have; a Refusal becomes its `{"error"}` answer.

import type { FakeAnswer, FakeRequest } from '../loopback.ts';
import { rateLimited } from '../loopback.ts';
import { answer, CLOB_ERRORS, refusal, Refusal } from './answers.ts';
import { apiKeyIds, createApiKey, deleteApiKey, deriveApiKey } from './api-keys.ts';
import { l1, l2, L2_ROUTES, redact } from './auth.ts';
import { dataRoute } from './data-routes.ts';
import { marketRoute } from './market-routes.ts';
import { expireDue } from './order-book.ts';
import { orderRoute } from './order-routes.ts';
import type { ClobState } from './state.ts';
import type { ClobFakeKnobs } from './types.ts';

const MALFORMED_CLOB_BODY = '{"success": true, "orderID": "0x';

async function route(state: ClobState, req: FakeRequest, knobs: ClobFakeKnobs): Promise<FakeAnswer> {
  const { method, path } = req;
  expireDue(state);

  // Public.
  const market = marketRoute(state, req, knobs);
  if (market) return market;

  // L1: API keys.
  if (method === 'POST' && path === '/auth/api-key') {
    const { address, nonce } = await l1(state, req);
    return createApiKey(state, address, nonce);
  }
  if (method === 'GET' && path === '/auth/derive-api-key') {
    const { address, nonce } = await l1(state, req);
    return deriveApiKey(state, address, nonce);
  }

  // Everything else is L2; a path the CLOB does not have is 404 before any authentication.
  if (!L2_ROUTES.some(([m, pattern]) => m === method && pattern.test(path))) return refusal(404, 'not found');
  const caller = l2(state, req);

  if (path === '/auth/api-keys' && method === 'GET') {
    return answer(200, { apiKeys: apiKeyIds(state, caller.key.address) });
  }
  if (path === '/auth/api-key' && method === 'DELETE') {
    deleteApiKey(state, caller.key);
    return answer(200, '"OK"');
  }
  if (path === '/auth/ban-status/closed-only' && method === 'GET') return answer(200, { closed_only: false });

  const trading = knobs.trading;
  const isCancel =
    method === 'DELETE' && ['/order', '/orders', '/cancel-all', '/cancel-market-orders'].includes(path);
  const isPost = method === 'POST' && (path === '/order' || path === '/orders');
  if (trading === 'disabled' && (isCancel || isPost)) return refusal(503, CLOB_ERRORS.tradingDisabled);
  if (trading === 'cancel-only' && isPost) return refusal(503, CLOB_ERRORS.cancelOnly);

  return (
    (await orderRoute(state, req, knobs, caller)) ??
    (await dataRoute(state, req, knobs, caller)) ??
    refusal(404, 'not found')
  );
}

export async function handleClobRequest(
  state: ClobState,
  req: FakeRequest,
  knobs: ClobFakeKnobs,
): Promise<FakeAnswer> {
  try {
    if (knobs.rateLimitRetryAfter !== null) {
      const wait = /^\d+$/.test(knobs.rateLimitRetryAfter) ? Number(knobs.rateLimitRetryAfter) : 60;
      const limited = rateLimited(knobs.rateLimitRetryAfter, { error: CLOB_ERRORS.tooManyRequests });
      limited.headers = {
        ...limited.headers,
        'poly-ratelimit-remaining': '0',
        'poly-ratelimit-reset': String(state.nowSeconds() + wait),
      };
      return limited;
    }
    if (knobs.serverError !== null) return refusal(knobs.serverError, CLOB_ERRORS.internal);
    if (knobs.malformedJson) return answer(200, MALFORMED_CLOB_BODY);
    return await route(state, req, knobs);
  } catch (err) {
    if (err instanceof Refusal) return refusal(err.status, err.message);
    throw err;
  } finally {
    redact(req.headers);
  }
}
