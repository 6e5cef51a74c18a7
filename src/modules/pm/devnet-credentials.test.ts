// Venue credentials as `npm start` wires them: the venue URLs taken from the devnet (its CLOB fake
// on Polygon, its Kalshi fake with the development key), the adapters built from config.

import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { bearer, createAccountWithSession } from '../../../test/support/identity.ts';
import { createPmVenuePorts } from '../../adapters/pm-venue/index.ts';
import { testConfig } from '../../config.ts';
import { systemClock } from '../../core/clock.ts';
import { withDevnetPmVenues } from '../../devnet/config-overrides.ts';

const devnet = inject('devnet');
let t: TestApp;

beforeAll(async () => {
  const base = testConfig();
  const pm = withDevnetPmVenues(base.pm, devnet);
  t = await createTestApp({
    config: { pm },
    deps: {
      pmVenues: createPmVenuePorts({
        polymarketClobUrl: pm.polymarketClobUrl,
        kalshiApiUrl: pm.kalshiApiUrl,
        timeoutMs: pm.venueTimeoutMs,
        clock: systemClock,
      }),
    },
  });
});
afterAll(async () => {
  await t?.close();
});

describe('venue credentials on the devnet', () => {
  it('points the venues at the devnet unless configured, and stores both kinds there', async () => {
    const clobUrl = devnet.chains[137]!.polymarket!.clobUrl;
    expect(t.deps.config.pm.polymarketClobUrl).toBe(clobUrl);
    expect(t.deps.config.pm.kalshiApiUrl).toBe(devnet.kalshi!.apiUrl);
    // An operator's URL wins.
    const configured = withDevnetPmVenues(
      { ...testConfig().pm, polymarketClobUrl: 'https://clob.example', polymarketClobUrlConfigured: true },
      devnet,
    );
    expect(configured.polymarketClobUrl).toBe('https://clob.example');

    const { sessionToken } = await createAccountWithSession(t.db.db);
    const headers = bearer(sessionToken);
    const signerKey = generatePrivateKey();
    const poly = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/pm/credentials',
      headers,
      payload: { venue: 'polymarket', signature_type: 0, signer_key: signerKey },
    });
    expect(poly.statusCode).toBe(201);
    expect(poly.json().meta.signer_address).toBe(privateKeyToAddress(signerKey).toLowerCase());

    const kalshi = await t.app.fastify.inject({
      method: 'POST',
      url: '/v1/pm/credentials',
      headers,
      payload: {
        venue: 'kalshi',
        api_key: devnet.kalshi!.keyId,
        private_key_pem: devnet.kalshi!.privateKeyPem,
      },
    });
    expect(kalshi.statusCode).toBe(201);

    for (const id of [poly.json().id, kalshi.json().id]) {
      const verified = await t.app.fastify.inject({
        method: 'POST',
        url: `/v1/pm/credentials/${id}/verify`,
        headers,
      });
      expect(verified.json()).toMatchObject({ accepted: true, reason: null });
    }
  });
});
