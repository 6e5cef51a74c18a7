// Venue credentials end to end: the routes against the CLOB and Kalshi fakes on loopback, the
// sealed rows in the database, the jurisdiction gate, the watch's security alerts, offboarding,
// the export, the re-seal job, and a search for every stored secret in everything a user or an
// operator can see.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { pino } from 'pino';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import {
  bearer,
  createAccountWithSession,
  createKey,
  randomAddress,
} from '../../../test/support/identity.ts';
import { createJurisdictionGate } from '../../adapters/geo/index.ts';
import { createPmVenuePorts } from '../../adapters/pm-venue/index.ts';
import { createPolymarketClob } from '../../adapters/pm-venue/polymarket.ts';
import { testConfig } from '../../config.ts';
import { ManualClock } from '../../core/clock.ts';
import { REDACTED_PATHS } from '../../core/log.ts';
import {
  keyringOf,
  SealingKeyring,
  venueCredentialContext,
  webhookSecretContext,
} from '../../core/sealing.ts';
import { startClobFake, type ClobFake } from '../../devnet/fakes/clob.ts';
import { startKalshiFake, type KalshiFake } from '../../devnet/fakes/kalshi.ts';
import { resealStale } from '../housekeeping/index.ts';
import { setSwitch } from '../switches/index.ts';
import { ensureSecret } from '../webhooks/service.ts';
import { vetCredential } from './credentials.ts';
import { noteUse } from './usage.ts';
import { Deadline } from '../../core/http/deadline.ts';

const clock = new ManualClock(new Date());
const logLines: string[] = [];
const TRUSTED_PROXY = '10.9.0.1';
let t: TestApp;
let clob: ClobFake;
let kalshi: KalshiFake;
/** Every secret handed to or made by the service in this file: none may show up anywhere. */
const secrets = new Set<string>();

const config = testConfig({});
config.pm = {
  ...config.pm,
  watch: { burstMinPerMinute: 5, burstFactor: 10 },
  geo: { ...config.pm.geo, restrictedCountries: ['US', 'FR'] },
};

beforeAll(async () => {
  clob = await startClobFake({ clock });
  kalshi = await startKalshiFake({ clock });
  const log = pino(
    { level: 'debug', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    }),
  );
  t = await createTestApp({
    clock,
    config,
    deps: {
      log,
      pmVenues: createPmVenuePorts({
        polymarketClobUrl: clob.url,
        kalshiApiUrl: kalshi.baseUrl,
        timeoutMs: 5_000,
        clock,
      }),
      jurisdiction: createJurisdictionGate({
        restrictedCountries: ['US', 'FR'],
        trustedProxies: ['10.9.0.0/16'],
        countryHeader: 'cf-ipcountry',
        maxmindDbPath: null,
        allowLoopback: true,
      }),
    },
  });
});
afterAll(async () => {
  await t?.close();
  await clob?.stop();
  await kalshi?.stop();
});

type Headers = Record<string, string>;

/** Every response body of this file, searched for secrets at the end. */
const responses: string[] = [];
async function inject(opts: InjectOptions) {
  const res = await t.app.fastify.inject(opts);
  responses.push(res.body);
  return res;
}

async function account(): Promise<{ accountId: string; headers: Headers; address: string }> {
  const a = await createAccountWithSession(t.db.db);
  return { accountId: a.accountId, address: a.address, headers: bearer(a.sessionToken) };
}

function post(headers: Headers, body: unknown, extra: { remoteAddress?: string; headers?: Headers } = {}) {
  return inject({
    method: 'POST',
    url: '/v1/pm/credentials',
    headers: { ...headers, ...extra.headers },
    payload: body as object,
    ...(extra.remoteAddress ? { remoteAddress: extra.remoteAddress } : {}),
  });
}

function hostedBody(signerKey = generatePrivateKey()) {
  secrets.add(signerKey);
  return { venue: 'polymarket', signature_type: 0, signer_key: signerKey, label: 'hosted EOA' };
}

/** An L2 key made at the CLOB for a fresh signer, as a client-signed caller would bring it. */
async function clientSignedBody(signatureType: 0 | 1 | 2 = 2) {
  const key = generatePrivateKey();
  const signer = privateKeyToAddress(key).toLowerCase();
  const adapter = createPolymarketClob({ baseUrl: clob.url, chainId: 137, timeoutMs: 5_000, clock });
  const creds = await adapter.deriveApiCredentials(key);
  secrets.add(key).add(creds.secret).add(creds.passphrase).add(creds.apiKey);
  return {
    body: {
      venue: 'polymarket',
      signature_type: signatureType,
      ...(signatureType === 0 ? {} : { funder: randomAddress() }),
      signer_address: signer,
      api_key: creds.apiKey,
      api_secret: creds.secret,
      api_passphrase: creds.passphrase,
    },
    creds,
  };
}

function kalshiKey(bits = 2048) {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  const keyId = crypto.randomUUID();
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  for (const line of pem.split('\n')) if (line.length > 40) secrets.add(line);
  secrets.add(keyId);
  return { keyId, pem, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

async function rowsOf(accountId: string) {
  return t.db.db.selectFrom('venue_credentials').selectAll().where('account_id', '=', accountId).execute();
}

describe('POST /v1/pm/credentials', () => {
  it('hosted flow: derives the L2 key with L1 headers, seals it with the signer key, and shows metadata only', async () => {
    const { accountId, headers } = await account();
    const body = hostedBody();
    const signer = privateKeyToAddress(body.signer_key as `0x${string}`).toLowerCase();
    const res = await post(headers, body);
    expect(res.statusCode).toBe(201);
    const view = res.json();
    expect(view.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(view).toMatchObject({
      venue: 'polymarket',
      label: 'hosted EOA',
      revoked_at: null,
      meta: {
        flow: 'hosted',
        signature_type: 0,
        signature_type_name: 'EOA',
        signer_address: signer,
        funder: signer,
      },
    });
    // The CLOB made exactly one key for the signer, and that is the key sealed in the row.
    const [apiKey] = clob.apiKeys(signer as `0x${string}`);
    expect(view.meta.api_key_hint).toBe(`…${apiKey!.slice(-4)}`);
    const [row] = await rowsOf(accountId);
    expect(row!.sealed!.startsWith(keyringOf(config.sealingKeys).currentPrefix())).toBe(true);
    const material = JSON.parse(
      keyringOf(config.sealingKeys).open(
        venueCredentialContext(accountId, 'polymarket', view.id),
        row!.sealed!,
      ),
    );
    expect(material).toMatchObject({ venue: 'polymarket', api_key: apiKey, signer_key: body.signer_key });
    secrets.add(material.api_secret).add(material.api_passphrase).add(material.api_key);
    // Bound to the account: another account's context does not open it.
    expect(() =>
      keyringOf(config.sealingKeys).open(
        venueCredentialContext('acc_other', 'polymarket', view.id),
        row!.sealed!,
      ),
    ).toThrow();
    const audit = await t.db.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('subject', '=', view.id)
      .orderBy('seq')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['venue_credential.store', 'venue_credential.use']);
    expect(audit[1]!.details).toMatchObject({ operation: 'authenticate', venue: 'polymarket' });
  });

  it('client-signed flow: a Safe funder with its L2 key; a wrong passphrase is 400 and nothing is stored', async () => {
    const { accountId, headers } = await account();
    const { body } = await clientSignedBody(2);
    const wrong = await post(headers, { ...body, api_passphrase: 'not-the-passphrase' });
    expectErrorBody(wrong, 400, 'INVALID_REQUEST');
    expect(wrong.json().message).toMatch(/polymarket rejected the credential/);
    expect(await rowsOf(accountId)).toHaveLength(0);

    const res = await post(headers, body);
    expect(res.statusCode).toBe(201);
    expect(res.json().meta).toMatchObject({
      flow: 'client_signed',
      signature_type: 2,
      signature_type_name: 'POLY_GNOSIS_SAFE',
      funder: body.funder,
      signer_address: body.signer_address,
    });
  });

  it('kalshi: a key Kalshi knows is stored; an unknown one is 400; a short RSA key is refused before asking', async () => {
    const { accountId, headers } = await account();
    const known = kalshiKey();
    kalshi.registerKey(known.keyId, known.publicPem);
    const ok = await post(headers, { venue: 'kalshi', api_key: known.keyId, private_key_pem: known.pem });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().meta).toMatchObject({ flow: 'hosted', api_key_hint: `…${known.keyId.slice(-4)}` });

    const unknown = kalshiKey();
    const refused = await post(headers, {
      venue: 'kalshi',
      api_key: unknown.keyId,
      private_key_pem: unknown.pem,
    });
    expectErrorBody(refused, 400, 'INVALID_REQUEST');
    expect(refused.json().message).toMatch(/kalshi rejected the credential/);

    const short = kalshiKey(1024);
    kalshi.registerKey(short.keyId, short.publicPem);
    const weak = await post(headers, { venue: 'kalshi', api_key: short.keyId, private_key_pem: short.pem });
    expectErrorBody(weak, 400, 'INVALID_REQUEST');
    expect(weak.json().message).toMatch(/^private_key_pem: .*2048/);
    expect(await rowsOf(accountId)).toHaveLength(1);
  });

  it('names the field of every malformed or inconsistent body, stores nothing and echoes no secret', async () => {
    const { accountId, headers } = await account();
    const key = generatePrivateKey();
    secrets.add(key);
    const signer = privateKeyToAddress(key).toLowerCase();
    const cases: Array<[object, RegExp]> = [
      [{ venue: 'polymarket', signer_key: key }, /signature_type/],
      [{ venue: 'polymarket', signature_type: 3, signer_key: key }, /signature_type/],
      [{ venue: 'polymarket', signature_type: 2, signer_key: key }, /funder/],
      [{ venue: 'polymarket', signature_type: 1, signer_key: key, funder: signer }, /funder/],
      [{ venue: 'polymarket', signature_type: 0, signer_key: key, funder: randomAddress() }, /funder/],
      [
        { venue: 'polymarket', signature_type: 0, signer_key: key, signer_address: randomAddress() },
        /signer_address/,
      ],
      [{ venue: 'polymarket', signature_type: 0 }, /signer_key or signer_address/],
      [{ venue: 'polymarket', signature_type: 0, signer_address: signer }, /api_key/],
      [
        { venue: 'polymarket', signature_type: 0, signer_key: key, api_key: crypto.randomUUID() },
        /api_key, api_secret/,
      ],
      [
        { venue: 'polymarket', signature_type: 0, signer_key: key, private_key_pem: 'x'.repeat(200) },
        /private_key_pem/,
      ],
      [{ venue: 'polymarket', signature_type: 0, signer_key: `${key.slice(0, -2)}zz` }, /signer_key/],
      [{ venue: 'polymarket', signature_type: 0, signer_key: `0x${'0'.repeat(64)}` }, /signer_key/],
      [{ venue: 'polymarket', signature_type: 0, signer_key: key, funder: '0x12' }, /funder/],
      [{ venue: 'polymarket', signature_type: 0, signer_key: key, api_secret_typo: 'x' }, /api_secret_typo/],
      [{ venue: 'manifold', signer_key: key }, /venue/],
      [{ venue: 'kalshi', api_key: 'not-a-uuid', private_key_pem: kalshiKey().pem }, /api_key/],
      [
        {
          venue: 'kalshi',
          api_key: crypto.randomUUID(),
          private_key_pem: `-----BEGIN PUBLIC KEY-----\n${'A'.repeat(120)}\n-----END PUBLIC KEY-----`,
        },
        /private_key_pem/,
      ],
      [
        { venue: 'kalshi', api_key: crypto.randomUUID(), private_key_pem: kalshiKey().pem, signer_key: key },
        /signer_key/,
      ],
    ];
    for (const [body, field] of cases) {
      const res = await post(headers, body);
      expectErrorBody(res, 400, 'INVALID_REQUEST');
      expect(res.json().message, JSON.stringify(body).slice(0, 80)).toMatch(field);
      expect(res.body).not.toContain(key.slice(2));
    }
    expect(await rowsOf(accountId)).toHaveLength(0);
  });

  it('answers 503 when sealing has only the public development key, before asking the venue', async () => {
    const deps = {
      clock,
      keyring: SealingKeyring.publicDevelopmentKeyring(),
      venues: t.deps.pmVenues!,
      watch: config.pm.watch,
    };
    const before = clob.requests.length;
    await expect(
      vetCredential(t.db.db, deps, hostedBody() as never, new Deadline(5_000)),
    ).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(clob.requests.length).toBe(before);
  });

  it('the credential_intake switch refuses hosted signer keys (403) but not the client-signed flow', async () => {
    const { accountId, headers } = await account();
    const off = {
      scope: 'venue' as const,
      target: 'credential_intake',
      enabled: false,
      reason: 'key custody review',
    };
    await t.db.db.transaction().execute((tx) => setSwitch(tx, clock, off, null));
    try {
      const hosted = await post(headers, hostedBody());
      expectErrorBody(hosted, 403, 'EXECUTION_DISABLED');
      expect(hosted.json().message).toMatch(/credential intake.*key custody review/i);
      expect(hosted.json().remediation).toMatch(/client-signed flow/);
      const { body } = await clientSignedBody(0);
      expect((await post(headers, body)).statusCode).toBe(201);
    } finally {
      await t.db.db.transaction().execute((tx) => setSwitch(tx, clock, { ...off, enabled: true }, null));
    }
    expect(await rowsOf(accountId)).toHaveLength(1);
  });

  it('is refused to read-scoped keys', async () => {
    const { accountId } = await account();
    const key = await createKey(t.db.db, accountId, { scopes: ['read'] });
    const res = await post(bearer(key.token), hostedBody());
    expectErrorBody(res, 403, 'FORBIDDEN');
  });
});

describe('GET, DELETE and verify', () => {
  it('lists metadata, revokes by destroying the ciphertext, and a revoked or foreign credential is 404', async () => {
    const { accountId, headers } = await account();
    const stranger = await account();
    const a = (await post(headers, hostedBody())).json();
    clock.advance(1_000);
    const b = (await post(headers, (await clientSignedBody(1)).body)).json();

    const list = await inject({ method: 'GET', url: '/v1/pm/credentials', headers });
    expect(list.statusCode).toBe(200);
    expect(list.json().credentials.map((c: { id: string }) => c.id)).toEqual([b.id, a.id]);
    const page = await inject({
      method: 'GET',
      url: '/v1/pm/credentials?limit=1&offset=1',
      headers,
    });
    expect(page.json().credentials.map((c: { id: string }) => c.id)).toEqual([a.id]);

    // Another account sees nothing and cannot touch it.
    for (const [method, url] of [
      ['DELETE', `/v1/pm/credentials/${a.id}`],
      ['POST', `/v1/pm/credentials/${a.id}/verify`],
    ] as const) {
      expectErrorBody(await inject({ method, url, headers: stranger.headers }), 404, 'NOT_FOUND');
    }
    expect(
      (await inject({ method: 'GET', url: '/v1/pm/credentials', headers: stranger.headers })).json(),
    ).toEqual({ credentials: [] });

    const revoked = await inject({
      method: 'DELETE',
      url: `/v1/pm/credentials/${a.id}`,
      headers,
    });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revoked_at).not.toBeNull();
    const row = await t.db.db
      .selectFrom('venue_credentials')
      .selectAll()
      .where('id', '=', a.id)
      .executeTakeFirstOrThrow();
    expect(row.sealed).toBeNull();
    expectErrorBody(
      await inject({ method: 'DELETE', url: `/v1/pm/credentials/${a.id}`, headers }),
      404,
      'NOT_FOUND',
    );
    expectErrorBody(
      await inject({ method: 'POST', url: `/v1/pm/credentials/${a.id}/verify`, headers }),
      404,
      'NOT_FOUND',
    );
    const active = await inject({ method: 'GET', url: '/v1/pm/credentials', headers });
    expect(active.json().credentials.map((c: { id: string }) => c.id)).toEqual([b.id]);
    const all = await inject({
      method: 'GET',
      url: '/v1/pm/credentials?include_revoked=true',
      headers,
    });
    expect(all.json().credentials).toHaveLength(2);
    expect((await rowsOf(accountId)).filter((r) => r.sealed !== null)).toHaveLength(1);
  });

  it('verify asks the venue with the stored credential and says when the venue stopped accepting it', async () => {
    const { headers } = await account();
    const k = kalshiKey();
    kalshi.registerKey(k.keyId, k.publicPem);
    const stored = (
      await post(headers, { venue: 'kalshi', api_key: k.keyId, private_key_pem: k.pem })
    ).json();
    clock.advance(1_000);
    const ok = await inject({
      method: 'POST',
      url: `/v1/pm/credentials/${stored.id}/verify`,
      headers,
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ accepted: true, reason: null });
    expect(ok.json().credential.meta.last_used_at).toBe(clock.now().toISOString());
    kalshi.revokeKey(k.keyId);
    const gone = await inject({
      method: 'POST',
      url: `/v1/pm/credentials/${stored.id}/verify`,
      headers,
    });
    expect(gone.statusCode).toBe(200);
    expect(gone.json().accepted).toBe(false);
    expect(gone.json().reason).toEqual(expect.any(String));
  });
});

describe('watching credential use', () => {
  async function alerts(credentialId: string) {
    return t.db.db
      .selectFrom('events')
      .select(['kind', 'payload'])
      .where('subject', '=', credentialId)
      .where('kind', '=', 'security.alert')
      .orderBy('created_at')
      .execute();
  }

  it('a use from a network never seen before raises security.alert once', async () => {
    const { headers } = await account();
    const stored = (await post(headers, hostedBody())).json();
    const verify = (remoteAddress: string, country: string) =>
      inject({
        method: 'POST',
        url: `/v1/pm/credentials/${stored.id}/verify`,
        headers: { ...headers, 'cf-ipcountry': country },
        remoteAddress,
      });
    expect((await verify('127.0.0.1', 'CH')).statusCode).toBe(200);
    expect(await alerts(stored.id)).toEqual([]);
    // Through the trusted edge from another network: the edge's country is believed.
    expect((await verify(TRUSTED_PROXY, 'CH')).statusCode).toBe(200);
    expect((await verify(TRUSTED_PROXY, 'CH')).statusCode).toBe(200);
    const raised = await alerts(stored.id);
    expect(raised).toHaveLength(1);
    expect(raised[0]!.payload).toMatchObject({
      credential_id: stored.id,
      venue: 'polymarket',
      reason: 'new_network',
      operation: 'authenticate',
      detail: { network: '10.9.0.0/24', networks_seen_before: 1 },
    });
  });

  it('a burst far above the credential’s own rate raises security.alert, once an hour', async () => {
    const { headers } = await account();
    const stored = (await post(headers, hostedBody())).json();
    // Into a fresh minute: the intake's use counted in the minute before.
    clock.set(new Date(Math.ceil((clock.now().getTime() + 1) / 60_000) * 60_000));
    for (let i = 0; i < 4; i += 1) {
      await inject({ method: 'POST', url: `/v1/pm/credentials/${stored.id}/verify`, headers });
    }
    expect(await alerts(stored.id)).toEqual([]);
    for (let i = 0; i < 3; i += 1) {
      await inject({ method: 'POST', url: `/v1/pm/credentials/${stored.id}/verify`, headers });
    }
    const raised = await alerts(stored.id);
    expect(raised).toHaveLength(1);
    expect(raised[0]!.payload).toMatchObject({
      reason: 'usage_burst',
      detail: { uses_this_minute: 5, threshold: 5 },
    });
    clock.advance(61_000);
  });

  it('a credential can be used for trading operations only', async () => {
    const { accountId, headers } = await account();
    const stored = (await post(headers, hostedBody())).json();
    const before = await t.db.db
      .selectFrom('audit_log')
      .select('seq')
      .where('subject', '=', stored.id)
      .execute();
    await expect(
      t.db.db.transaction().execute((tx) =>
        noteUse(
          tx,
          { clock, watch: config.pm.watch },
          {
            accountId,
            credentialId: stored.id,
            venue: 'polymarket',
            operation: 'export' as never,
            actor: null,
          },
        ),
      ),
    ).rejects.toThrow(/cannot be used for "export"/);
    const after = await t.db.db
      .selectFrom('audit_log')
      .select('seq')
      .where('subject', '=', stored.id)
      .execute();
    expect(after).toHaveLength(before.length);
  });
});

describe('the jurisdiction gate', () => {
  it('answers 451 from restricted and unknown origins before authentication or parsing; other routes are unaffected', async () => {
    const { headers } = await account();
    const fromUs = { remoteAddress: TRUSTED_PROXY, headers: { 'cf-ipcountry': 'US' } };
    const requests = [
      { method: 'GET' as const, url: '/v1/pm/credentials' },
      { method: 'POST' as const, url: '/v1/pm/credentials' },
      { method: 'DELETE' as const, url: `/v1/pm/credentials/${crypto.randomUUID()}` },
      { method: 'POST' as const, url: `/v1/pm/credentials/${crypto.randomUUID()}/verify` },
    ];
    for (const r of requests) {
      // Restricted, with a valid session, without one, and with a body that is not JSON.
      for (const h of [headers, {}]) {
        const res = await inject({ ...r, ...fromUs, headers: { ...h, ...fromUs.headers } });
        expectErrorBody(res, 451, 'JURISDICTION_BLOCKED');
        expect(res.json().message).toContain('US');
      }
      const junk = await inject({
        ...r,
        remoteAddress: TRUSTED_PROXY,
        headers: { ...headers, 'cf-ipcountry': 'FR', 'content-type': 'application/json' },
        payload: '{not json',
      });
      expectErrorBody(junk, 451, 'JURISDICTION_BLOCKED');
      // Unknown: a public address, no GeoIP database; a country header from it is not believed.
      const unknown = await inject({
        ...r,
        remoteAddress: '198.51.100.7',
        headers: { ...headers, 'cf-ipcountry': 'CH' },
      });
      expectErrorBody(unknown, 451, 'JURISDICTION_BLOCKED');
      expect(unknown.json().message).toMatch(/cannot be established/);
      // The edge's Tor marker is unknown too.
      const tor = await inject({
        ...r,
        remoteAddress: TRUSTED_PROXY,
        headers: { ...headers, 'cf-ipcountry': 'T1' },
      });
      expectErrorBody(tor, 451, 'JURISDICTION_BLOCKED');
    }
    // Nothing else is gated.
    const other = await inject({
      method: 'GET',
      url: '/v1/intents',
      ...fromUs,
      headers: { ...headers, ...fromUs.headers },
    });
    expect(other.statusCode).toBe(200);
    // An allowed country through the edge passes.
    const ok = await inject({
      method: 'GET',
      url: '/v1/pm/credentials',
      remoteAddress: TRUSTED_PROXY,
      headers: { ...headers, 'cf-ipcountry': 'CH' },
    });
    expect(ok.statusCode).toBe(200);
  });
});

describe('offboarding, export and re-sealing', () => {
  it('offboarding zeroes every active credential and counts them; the export lists metadata only', async () => {
    const { accountId, address, headers } = await account();
    await post(headers, hostedBody());
    const second = (await post(headers, (await clientSignedBody(2)).body)).json();
    await inject({ method: 'DELETE', url: `/v1/pm/credentials/${second.id}`, headers });
    await post(headers, hostedBody());

    const exported = await inject({ method: 'GET', url: '/v1/account/export', headers });
    expect(exported.statusCode).toBe(200);
    const venueCredentials = exported.json().venue_credentials;
    expect(venueCredentials).toHaveLength(3);
    expect(venueCredentials.filter((c: { revoked_at: string | null }) => c.revoked_at !== null)).toHaveLength(
      1,
    );
    expect(Object.keys(venueCredentials[0]).sort()).toEqual([
      'created_at',
      'id',
      'label',
      'meta',
      'revoked_at',
      'venue',
    ]);

    const off = await inject({
      method: 'POST',
      url: '/v1/account/offboard',
      headers,
      payload: { confirm_wallet_address: address },
    });
    expect(off.statusCode).toBe(200);
    expect(off.json().deleted.credentials_zeroed).toBe(2);
    const rows = await rowsOf(accountId);
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.sealed === null && r.revoked_at !== null)).toBe(true);
  });

  it('the re-seal job moves credentials and webhook secrets onto the newest key; they still open', async () => {
    const { accountId, headers } = await account();
    const stored = (await post(headers, hostedBody())).json();
    const webhookSecret = await ensureSecret(
      t.db.db,
      clock,
      { production: false, keyring: keyringOf(config.sealingKeys) },
      accountId,
    );
    secrets.add(webhookSecret);
    const newer = [{ id: 'k-next', key: randomBytes(32).toString('hex') }, ...config.sealingKeys];
    const ring = keyringOf(newer);
    const moved = await resealStale(t.db.db, ring);
    expect(moved.venueCredentials).toBeGreaterThanOrEqual(1);
    expect(moved.webhookSecrets).toBeGreaterThanOrEqual(1);
    expect(moved.unopenable).toBe(0);
    const row = await t.db.db
      .selectFrom('venue_credentials')
      .selectAll()
      .where('id', '=', stored.id)
      .executeTakeFirstOrThrow();
    expect(row.sealed!.startsWith('s2.k-next.')).toBe(true);
    expect(
      JSON.parse(ring.open(venueCredentialContext(accountId, 'polymarket', stored.id), row.sealed!)).venue,
    ).toBe('polymarket');
    const endpoint = await t.db.db
      .selectFrom('webhook_endpoints')
      .select('secret_sealed')
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    expect(ring.open(webhookSecretContext(accountId), endpoint.secret_sealed!)).toBe(webhookSecret);
    // A second run finds nothing to move.
    expect(await resealStale(t.db.db, ring)).toEqual({
      webhookSecrets: 0,
      venueCredentials: 0,
      unopenable: 0,
    });
    // A ring without the key that sealed them leaves them untouched and counts them.
    const lost = await resealStale(
      t.db.db,
      keyringOf([{ id: 'lost', key: randomBytes(32).toString('hex') }]),
    );
    expect(lost.venueCredentials + lost.webhookSecrets).toBe(0);
    expect(lost.unopenable).toBeGreaterThanOrEqual(2);
    const still = await t.db.db
      .selectFrom('venue_credentials')
      .select('sealed')
      .where('id', '=', stored.id)
      .executeTakeFirstOrThrow();
    expect(still.sealed).toBe(row.sealed);
    // A key id with `_` is matched literally: values of `k-nextX` are not taken for `k_next`'s.
    const underscore = keyringOf([{ id: 'k_next', key: randomBytes(32).toString('hex') }, ...newer]);
    expect((await resealStale(t.db.db, underscore)).venueCredentials).toBeGreaterThanOrEqual(1);
    const moved2 = await t.db.db
      .selectFrom('venue_credentials')
      .select('sealed')
      .where('id', '=', stored.id)
      .executeTakeFirstOrThrow();
    expect(moved2.sealed!.startsWith('s2.k_next.')).toBe(true);
    // Back onto the test key, so the rest of the suite's app opens them.
    const back = keyringOf([
      config.sealingKeys[0]!,
      ...underscore.keys.slice(0, 2).map((k) => ({ id: k.id, key: k.key.toString('hex') })),
    ]);
    expect((await resealStale(t.db.db, back)).unopenable).toBe(0);
  });
});

describe('no secret anywhere', () => {
  it('no stored secret appears in logs, error bodies, responses, the export, audit facts or events', async () => {
    expect(secrets.size).toBeGreaterThan(20);
    // Everything the service wrote that a user or an operator can read, besides the ciphertexts.
    const { rows: audit } = await sql<{
      blob: string;
    }>`SELECT row_to_json(a)::text AS blob FROM audit_log a`.execute(t.db.db);
    const { rows: events } = await sql<{
      blob: string;
    }>`SELECT row_to_json(e)::text AS blob FROM events e`.execute(t.db.db);
    const { rows: creds } = await sql<{ blob: string }>`
      SELECT (to_jsonb(c) - 'sealed')::text AS blob FROM venue_credentials c`.execute(t.db.db);
    const { rows: idem } = await sql<{
      blob: string;
    }>`SELECT row_to_json(i)::text AS blob FROM idempotency_keys i`.execute(t.db.db);
    const haystacks = [
      ...logLines,
      ...responses,
      ...audit.map((r) => r.blob),
      ...events.map((r) => r.blob),
      ...creds.map((r) => r.blob),
      ...idem.map((r) => r.blob),
    ];
    expect(logLines.length).toBeGreaterThan(10);
    for (const secret of secrets) {
      for (const hay of haystacks) {
        if (hay.includes(secret))
          throw new Error(`a secret (…${secret.slice(-4)}) was found in: ${hay.slice(0, 200)}`);
      }
    }
    // And the ciphertext column holds no plaintext either.
    const { rows: sealed } = await sql<{ sealed: string }>`
      SELECT sealed FROM venue_credentials WHERE sealed IS NOT NULL`.execute(t.db.db);
    for (const secret of secrets) for (const r of sealed) expect(r.sealed.includes(secret)).toBe(false);
  });
});
