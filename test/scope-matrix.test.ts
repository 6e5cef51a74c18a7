// The scope matrix (docs/scopes.md) against the route table, and the guard's shared cases on
// every registered bearer route: no credential 401, a key without the scope 403, a wallet-pinned
// key on another wallet 403, a wallet-pinned key on a route that is not wallet-bearing 403.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteDefinition, Scope } from '../src/core/http/route-table.ts';
import { ALL_SCOPES, SCOPE_RULES } from '../src/modules/auth/scopes.ts';
import { everyRoute } from './support/routes.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { expectErrorBody } from './support/error-body.ts';
import { bearer, createAccount, createKey, randomAddress } from './support/identity.ts';

interface MatrixRow {
  method: string;
  path: string;
  class: string;
  rule: string;
  walletBearing: boolean;
  walletFrom: string;
  status: string;
}

function readMatrix(): MatrixRow[] {
  const text = readFileSync(new URL('../docs/scopes.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('## Endpoints'));
  return section
    .split('\n')
    .filter((line) => /^\| (GET|POST|PUT|DELETE|\*) \|/.test(line))
    .map((line) => {
      const cells = line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
      const [method = '', path = '', cls = '', rule = '', wallet = '', from = '', status = ''] = cells;
      return { method, path, class: cls, rule, walletBearing: wallet === 'yes', walletFrom: from, status };
    });
}

const matrix = readMatrix();
const rowOf = (route: RouteDefinition) =>
  matrix.find((r) => r.method === route.method && r.path === route.url);
const isGuarded = (route: RouteDefinition) => route.class === 'bearer' || route.class === 'executor';

describe('docs/scopes.md agrees with the route table', () => {
  it('lists every registered route with its class, scope rule and wallet locator', () => {
    expect(matrix.length).toBeGreaterThan(50);
    for (const route of everyRoute) {
      const row = rowOf(route);
      expect(row, `${route.method} ${route.url} is missing from docs/scopes.md`).toBeDefined();
      if (!row) continue;
      const where = `${route.method} ${route.url}`;
      expect(row.class, where).toBe(route.class);
      expect(row.rule, where).toBe(isGuarded(route) ? (route.scope ?? 'read') : '-');
      expect(row.walletBearing, where).toBe(route.wallet !== false);
      const from = !route.wallet
        ? '-'
        : route.wallet.in === 'resource'
          ? 'resource'
          : `${route.wallet.in}.${route.wallet.field}`;
      expect(row.walletFrom, where).toBe(from);
      expect(row.status, where).toMatch(/^served/);
    }
  });

  it('marks as served only routes that are registered', () => {
    const served = matrix.filter((r) => r.status.startsWith('served'));
    for (const row of served) {
      const route = everyRoute.find((r) => r.method === row.method && r.url === row.path);
      expect(route, `${row.method} ${row.path} is marked served but not registered`).toBeDefined();
    }
  });

  it('never lets the supervisor scope open exposure: no write route admits it', () => {
    expect(SCOPE_RULES.write).not.toContain('supervisor');
    for (const row of matrix.filter((r) => r.rule === 'write')) {
      expect(row.class === 'bearer' || row.class === 'executor', `${row.method} ${row.path}`).toBe(true);
    }
  });
});

describe('the guard on every registered bearer route', () => {
  let t: TestApp;
  let accountId: string;
  const guarded = everyRoute.filter(isGuarded);

  beforeAll(async () => {
    t = await createTestApp();
    ({ accountId } = await createAccount(t.db.db));
  });
  afterAll(async () => {
    await t.close();
  });

  /**
   * A request to the route naming `wallet` wherever the route reads its wallet. A `resource`
   * route names an unknown resource, whose wallet the guard cannot find (so a pinned key is denied).
   */
  function requestFor(route: RouteDefinition, wallet: string, headers: Record<string, string>) {
    let url = route.url.replace(/\{(\w+)\}/g, (_, name: string) =>
      route.wallet && route.wallet.in === 'params' && route.wallet.field === name ? wallet : 'unknown_id',
    );
    let payload: Record<string, unknown> | undefined;
    if (route.wallet && route.wallet.in === 'query') url += `?${route.wallet.field}=${wallet}`;
    if (route.wallet && route.wallet.in === 'body') {
      payload = { [route.wallet.field]: route.wallet.many ? [wallet] : wallet };
    } else if (route.method === 'POST' || route.method === 'PUT') {
      payload = {};
    }
    return {
      method: route.method,
      url,
      headers,
      ...(payload ? { payload } : {}),
    };
  }

  it('covers at least the identity routes', () => {
    expect(guarded.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining([
        'GET /v1/keys',
        'POST /v1/keys',
        'DELETE /v1/keys/{id}',
        'DELETE /v1/auth/session',
      ]),
    );
  });

  it('answers 401 without a credential, and with a malformed or unknown one', async () => {
    for (const route of guarded) {
      for (const headers of [{}, { authorization: 'Bearer nonsense' }, bearer(`psk_${'A'.repeat(43)}`)]) {
        const res = await t.app.fastify.inject(requestFor(route, randomAddress(), headers));
        expectErrorBody(res, 401, 'UNAUTHORIZED');
      }
    }
  });

  it('answers 403 to a key whose scopes the route does not admit', async () => {
    let checked = 0;
    for (const route of guarded) {
      const admitted = SCOPE_RULES[route.scope ?? 'read'];
      const lacking = ALL_SCOPES.filter((s) => !admitted.includes(s)) as Scope[];
      if (lacking.length === 0) continue; // every scope includes read
      const key = await createKey(t.db.db, accountId, { scopes: lacking });
      const res = await t.app.fastify.inject(requestFor(route, randomAddress(), bearer(key.token)));
      expectErrorBody(res, 403, 'FORBIDDEN');
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('answers 403 to a wallet-pinned key on another wallet, and on a route that is not wallet-bearing', async () => {
    for (const route of guarded) {
      const scopes = [...SCOPE_RULES[route.scope ?? 'read']] as Scope[];
      const pinnedTo = randomAddress();
      const key = await createKey(t.db.db, accountId, { scopes, wallets: [pinnedTo] });
      const res = await t.app.fastify.inject(requestFor(route, randomAddress(), bearer(key.token)));
      const body = expectErrorBody(res, 403, 'FORBIDDEN');
      expect(body.message, `${route.method} ${route.url}`).toMatch(
        route.class === 'executor'
          ? /only the treasury executor/i
          : route.wallet
            ? /outside this API key's wallet pin/
            : /only wallet-bearing routes/,
      );
    }
  });
});
