// Wallet sign-in and sessions over HTTP, against the devnet: EOAs, undeployed (ERC-6492) and
// deployed (ERC-1271) smart accounts, every refusal, the session's life, and what is stored.

import fc from 'fast-check';
import { sql } from 'kysely';
import { SiweMessage } from 'siwe';
import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  getAddress,
  http,
  parseAbi,
  serializeErc6492Signature,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createSiweMessage, parseSiweMessage as viemParseSiweMessage } from 'viem/siwe';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/app.ts';
import { checkErrorShape, expectErrorBody } from '../../../test/support/error-body.ts';
import { chainDefinition, createViemChainPort } from '../../adapters/chain/viem.ts';
import { ManualClock } from '../../core/clock.ts';
import type { Db } from '../../core/db/database.ts';
import { devnetChain, devnetRpcUrls } from '../../devnet/devnet.ts';
import { newFundedAccount } from '../../devnet/faucet.ts';
import { SIGN_IN_REPLAY_REMEDIATION } from './service.ts';
import { SIWE_STATEMENT } from './siwe.ts';
import { hashToken, newToken } from './tokens.ts';

const devnet = inject('devnet');
const SIWE = { domain: 'purser.test', uri: 'https://purser.test', chainId: 8453 };
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const clock = new ManualClock('2026-03-01T12:00:00.000Z');
const factoryAbi = parseAbi([
  'function createAccount(address owner, uint256 salt) returns (address)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
]);

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({
    clock,
    poolSize: 24,
    config: { siwe: SIWE, publicRateLimitPerMinute: 1_000_000 },
    deps: { chain: createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) }), devnet },
  });
});
afterAll(async () => {
  await t?.close();
});

interface ChallengeBody {
  message: string;
  nonce: string;
  domain: string;
  uri: string;
  version: string;
  chain_id: number;
  issued_at: string;
  expiration_time: string;
}
interface SignInBody {
  token: string;
  address: string;
  expires_at: string;
}

const newEoa = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey());

/** The address with the case of one letter flipped: still mixed case, no longer EIP-55. */
function wrongChecksum(address: string): string {
  const i = address.slice(2).search(/[a-fA-F]/) + 2;
  const ch = address[i] ?? '';
  const flipped = ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase();
  const out = `${address.slice(0, i)}${flipped}${address.slice(i + 1)}`;
  expect(out.toLowerCase()).not.toBe(out);
  return out;
}

async function challenge(address: string, chainId?: number, app: TestApp = t): Promise<ChallengeBody> {
  const res = await app.app.fastify.inject({
    method: 'POST',
    url: '/v1/auth/challenge',
    payload: { address, ...(chainId === undefined ? {} : { chain_id: chainId }) },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as ChallengeBody;
}

function verify(
  message: string,
  signature: string,
  headers: Record<string, string> = {},
  app: TestApp = t,
  remoteAddress?: string,
) {
  return app.app.fastify.inject({
    method: 'POST',
    url: '/v1/auth/verify',
    payload: { message, signature },
    headers,
    ...(remoteAddress ? { remoteAddress } : {}),
  });
}

async function signIn(
  account: PrivateKeyAccount,
  headers: Record<string, string> = {},
  app: TestApp = t,
): Promise<SignInBody> {
  const c = await challenge(account.address, undefined, app);
  const res = await verify(c.message, await account.signMessage({ message: c.message }), headers, app);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as SignInBody;
}

const signOut = (token: string) =>
  t.app.fastify.inject({
    method: 'DELETE',
    url: '/v1/auth/session',
    headers: { authorization: `Bearer ${token}` },
  });

const accountOf = (address: string, db: Db = t.deps.db) =>
  db.selectFrom('accounts').selectAll().where('address', '=', address.toLowerCase()).executeTakeFirst();
const nonceRow = (nonce: string) =>
  t.deps.db.selectFrom('siwe_nonces').selectAll().where('nonce', '=', nonce).executeTakeFirstOrThrow();
const sessionOf = (token: string) =>
  t.deps.db
    .selectFrom('sessions')
    .selectAll()
    .where('token_hash', '=', hashToken(token))
    .executeTakeFirstOrThrow();
async function count(table: 'accounts' | 'sessions' | 'siwe_nonces'): Promise<number> {
  const r = await t.deps.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

function publicClient(chainId: number) {
  const { rpcUrl } = devnetChain(devnet, chainId);
  return createPublicClient({ chain: chainDefinition(chainId, rpcUrl), transport: http(rpcUrl) });
}

describe('POST /v1/auth/challenge', () => {
  it('returns a SIWE message for this environment and stores its nonce', async () => {
    const eoa = newEoa();
    const now = clock.now();
    const c = await challenge(eoa.address.toLowerCase());
    expect(Object.keys(c).sort()).toEqual([
      'chain_id',
      'domain',
      'expiration_time',
      'issued_at',
      'message',
      'nonce',
      'uri',
      'version',
    ]);
    expect(c).toMatchObject({
      domain: 'purser.test',
      uri: 'https://purser.test',
      version: '1',
      chain_id: 8453,
      issued_at: now.toISOString(),
      expiration_time: new Date(now.getTime() + 10 * MINUTE).toISOString(),
    });
    expect(c.nonce).toMatch(/^[A-Za-z0-9]{24}$/);
    // Any SIWE parser reads it: the address is written EIP-55 checksummed.
    const parsed = viemParseSiweMessage(c.message);
    expect(parsed).toMatchObject({
      domain: 'purser.test',
      address: eoa.address,
      uri: 'https://purser.test',
      version: '1',
      chainId: 8453,
      nonce: c.nonce,
    });
    expect(parsed.issuedAt?.toISOString()).toBe(c.issued_at);
    expect(parsed.expirationTime?.toISOString()).toBe(c.expiration_time);
    expect(new SiweMessage(c.message).nonce).toBe(c.nonce);
    expect(await nonceRow(c.nonce)).toMatchObject({
      address: eoa.address.toLowerCase(),
      chain_id: 8453,
      message: c.message,
      used_at: null,
    });
  });

  it('takes chain_id 84532 and 137 and refuses chains it does not know', async () => {
    const eoa = newEoa();
    expect((await challenge(eoa.address, 84532)).chain_id).toBe(84532);
    expect((await challenge(eoa.address, 137)).message).toContain('\nChain ID: 137\n');
    const before = await count('siwe_nonces');
    const refused: unknown[] = [
      { address: eoa.address, chain_id: 1 },
      { address: eoa.address, chain_id: '8453' },
      { address: eoa.address, chain_id: 8453.5 },
      { address: eoa.address.slice(0, 41) },
      { address: `${eoa.address}00` },
      { address: eoa.address, extra: true },
      { address: wrongChecksum(eoa.address) },
      {},
    ];
    for (const payload of refused) {
      const res = await t.app.fastify.inject({
        method: 'POST',
        url: '/v1/auth/challenge',
        payload: payload as object,
      });
      expectErrorBody(res, 400, 'INVALID_REQUEST');
    }
    expect(await count('siwe_nonces')).toBe(before);
  });
});

describe('POST /v1/auth/verify', () => {
  it('signs an EOA in: session, account, audit fact, credential use and event', async () => {
    const eoa = newEoa();
    const now = clock.now();
    const c = await challenge(eoa.address);
    const res = await verify(c.message, await eoa.signMessage({ message: c.message }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json() as SignInBody;
    expect(Object.keys(body).sort()).toEqual(['address', 'expires_at', 'token']);
    expect(body.token).toMatch(/^pss_[A-Za-z0-9_-]{43}$/);
    expect(body.address).toBe(eoa.address);
    expect(body.expires_at).toBe(new Date(now.getTime() + DAY).toISOString());

    const account = await accountOf(eoa.address);
    expect(account).toMatchObject({ kind: 'agent', is_test_fixture: false, offboarded_at: null });
    expect(account?.id).toMatch(/^acc_/);
    const session = await sessionOf(body.token);
    expect(session).toMatchObject({ account_id: account?.id, revoked_at: null });
    expect(session.id).toMatch(/^ses_/);
    expect(new Date(session.expires_at).toISOString()).toBe(body.expires_at);
    expect((await nonceRow(c.nonce)).used_at).toEqual(now);

    const audit = await t.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('account_id', '=', account!.id)
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: 'auth.sign_in',
      actor: `session:${session.id}`,
      subject: session.id,
    });
    expect(audit[0]?.details).toMatchObject({ address: eoa.address, chain_id: 8453, account_created: true });
    const events = await t.deps.db
      .selectFrom('events')
      .selectAll()
      .where('account_id', '=', account!.id)
      .execute();
    expect(events.map((e) => [e.kind, e.subject])).toEqual([['auth.signed_in', session.id]]);
    expect(events[0]?.payload).toMatchObject({ session_id: session.id, address: eoa.address });

    // A second sign-in of the same address reuses the account.
    const again = await signIn(eoa);
    expect((await sessionOf(again.token)).account_id).toBe(account?.id);
    const second = await t.deps.db
      .selectFrom('audit_log')
      .select('details')
      .where('account_id', '=', account!.id)
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    expect(second.details).toMatchObject({ account_created: false });
  });

  it('accepts the challenge rebuilt by the siwe package and by viem createSiweMessage', async () => {
    const eoa = newEoa();
    const first = await challenge(eoa.address);
    // The same fields, the dates written with another offset notation: other bytes, same message.
    const bySiwe = new SiweMessage({
      domain: first.domain,
      address: eoa.address,
      statement: SIWE_STATEMENT,
      uri: first.uri,
      version: '1',
      chainId: first.chain_id,
      nonce: first.nonce,
      issuedAt: first.issued_at.replace('Z', '+00:00'),
      expirationTime: first.expiration_time.replace('Z', '+00:00'),
    }).prepareMessage();
    expect(bySiwe).not.toBe(first.message);
    const a = await verify(bySiwe, await eoa.signMessage({ message: bySiwe }));
    expect(a.statusCode, a.body).toBe(200);

    const second = await challenge(eoa.address);
    const byViem = createSiweMessage({
      domain: second.domain,
      address: eoa.address,
      statement: SIWE_STATEMENT,
      uri: second.uri,
      version: '1',
      chainId: second.chain_id,
      nonce: second.nonce,
      issuedAt: new Date(second.issued_at),
      expirationTime: new Date(second.expiration_time),
    });
    const b = await verify(byViem, await eoa.signMessage({ message: byViem }));
    expect(b.statusCode, b.body).toBe(200);
    expect((await sessionOf((b.json() as SignInBody).token)).account_id).toBe(
      (await sessionOf((a.json() as SignInBody).token)).account_id,
    );
  });

  it('signs in an undeployed smart account with an ERC-6492-wrapped signature, deploying nothing', async () => {
    const chainId = 84532;
    const client = publicClient(chainId);
    const factory = devnetChain(devnet, chainId).contracts.accountFactory;
    const owner = newEoa();
    const salt = 11n;
    const account = await client.readContract({
      address: factory,
      abi: factoryAbi,
      functionName: 'getAddress',
      args: [owner.address, salt],
    });
    expect(await client.getCode({ address: account })).toBeUndefined();

    const c = await challenge(account, chainId);
    const ownerSig = await owner.signMessage({ message: c.message });
    // The owner's bare signature is not the undeployed account's.
    expectErrorBody(await verify(c.message, ownerSig), 401, 'AUTH_SIGNATURE_INVALID');
    const factoryData = encodeFunctionData({
      abi: factoryAbi,
      functionName: 'createAccount',
      args: [owner.address, salt],
    });
    const wrapped = serializeErc6492Signature({ address: factory, data: factoryData, signature: ownerSig });
    const res = await verify(c.message, wrapped);
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as SignInBody).address).toBe(getAddress(account));
    expect(await accountOf(account)).toBeDefined();
    expect(await client.getCode({ address: account })).toBeUndefined();
  });

  it('signs in a deployed smart account through ERC-1271', async () => {
    const chainId = 8453;
    const client = publicClient(chainId);
    const { rpcUrl, contracts } = devnetChain(devnet, chainId);
    const relayer = await newFundedAccount(devnet, { chainId });
    const wallet = createWalletClient({
      account: privateKeyToAccount(relayer.privateKey),
      chain: chainDefinition(chainId, rpcUrl),
      transport: http(rpcUrl),
    });
    const owner = newEoa();
    const salt = 12n;
    const hash = await wallet.writeContract({
      address: contracts.accountFactory,
      abi: factoryAbi,
      functionName: 'createAccount',
      args: [owner.address, salt],
    });
    expect((await client.waitForTransactionReceipt({ hash })).status).toBe('success');
    const account = await client.readContract({
      address: contracts.accountFactory,
      abi: factoryAbi,
      functionName: 'getAddress',
      args: [owner.address, salt],
    });
    expect(await client.getCode({ address: account })).toBeDefined();

    const c = await challenge(account);
    const stranger = newEoa();
    expectErrorBody(
      await verify(c.message, await stranger.signMessage({ message: c.message })),
      401,
      'AUTH_SIGNATURE_INVALID',
    );
    const res = await verify(c.message, await owner.signMessage({ message: c.message }));
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json() as SignInBody).address).toBe(getAddress(account));
  });

  it('refuses a message whose fields do not match the environment, without burning the nonce', async () => {
    const eoa = newEoa();
    const other = newEoa();
    const c = await challenge(eoa.address);
    const variants: { field: string; text: string; signer: PrivateKeyAccount; expect: RegExp }[] = [
      {
        field: 'domain',
        text: c.message.replace('purser.test wants', 'evil.test wants'),
        signer: eoa,
        expect: /domain/,
      },
      {
        field: 'uri',
        text: c.message.replace('URI: https://purser.test', 'URI: https://evil.test'),
        signer: eoa,
        expect: /URI/,
      },
      {
        field: 'chain',
        text: c.message.replace('Chain ID: 8453', 'Chain ID: 84532'),
        signer: eoa,
        expect: /Chain ID/,
      },
      {
        field: 'address',
        text: c.message.replace(eoa.address, other.address),
        signer: other,
        expect: /address/,
      },
      {
        field: 'version',
        text: c.message.replace('Version: 1', 'Version: 2'),
        signer: eoa,
        expect: /Version/,
      },
      { field: 'scheme', text: `http://${c.message}`, signer: eoa, expect: /scheme/ },
      {
        field: 'resources',
        text: `${c.message}\nResources:\n- https://purser.test/v1/keys`,
        signer: eoa,
        expect: /Resources/,
      },
      { field: 'form', text: `${c.message}\n`, signer: eoa, expect: /not an EIP-4361/ },
      { field: 'form', text: 'Sign in please', signer: eoa, expect: /not an EIP-4361/ },
    ];
    for (const v of variants) {
      expect(v.text, v.field).not.toBe(c.message);
      const res = await verify(v.text, await v.signer.signMessage({ message: v.text }));
      const body = expectErrorBody(res, 401, 'AUTH_SIGNATURE_INVALID');
      expect(body.message, v.field).toMatch(v.expect);
      expect(body.next?.[0]).toMatchObject({ method: 'POST', path: '/v1/auth/challenge' });
    }
    expect((await nonceRow(c.nonce)).used_at).toBeNull();
    const ok = await verify(c.message, await eoa.signMessage({ message: c.message }));
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('refuses a message re-signed with any one field changed from its challenge; no session, the nonce stays usable', async () => {
    const eoa = newEoa();
    const other = newEoa();
    const c = await challenge(eoa.address);
    clock.advance(1000);
    const later = await challenge(eoa.address);
    const at = (iso: string, ms: number) => new Date(new Date(iso).getTime() + ms).toISOString();
    const replaceLine = (prefix: string, line: string) => {
      const lines = c.message.split('\n');
      const i = lines.findIndex((l) => l.startsWith(prefix));
      expect(i, prefix).toBeGreaterThan(0);
      lines[i] = line;
      return lines.join('\n');
    };
    const variants: { field: string; text: string; signer?: PrivateKeyAccount; expect: RegExp }[] = [
      { field: 'domain', text: c.message.replace('purser.test wants', 'evil.test wants'), expect: /domain/ },
      { field: 'scheme', text: `https://${c.message}`, expect: /scheme/ },
      {
        field: 'address',
        text: c.message.replace(eoa.address, other.address),
        signer: other,
        expect: /address/,
      },
      {
        field: 'statement',
        text: c.message.replace(SIWE_STATEMENT, 'Sign in to Purser.'),
        expect: /statement/,
      },
      {
        field: 'statement removed',
        text: c.message.replace(`\n\n${SIWE_STATEMENT}\n\n`, '\n\n\n'),
        expect: /statement is absent/,
      },
      { field: 'uri', text: replaceLine('URI: ', 'URI: https://purser.test/other'), expect: /URI/ },
      { field: 'version', text: replaceLine('Version: ', 'Version: 2'), expect: /Version/ },
      { field: 'chain id', text: replaceLine('Chain ID: ', 'Chain ID: 84532'), expect: /Chain ID/ },
      // Another live nonce of the same address: the rest of the message is not its challenge's.
      { field: 'nonce', text: c.message.replace(c.nonce, later.nonce), expect: /Issued At/ },
      {
        field: 'issued at',
        text: replaceLine('Issued At: ', `Issued At: ${at(c.issued_at, 1000)}`),
        expect: /Issued At/,
      },
      {
        field: 'expiration time',
        text: replaceLine('Expiration Time: ', `Expiration Time: ${at(c.expiration_time, 60 * MINUTE)}`),
        expect: /Expiration Time/,
      },
      { field: 'not before', text: `${c.message}\nNot Before: ${c.issued_at}`, expect: /Not Before/ },
      { field: 'request id', text: `${c.message}\nRequest ID: r1`, expect: /Request ID/ },
      {
        field: 'resources',
        text: `${c.message}\nResources:\n- https://purser.test/v1/keys`,
        expect: /Resources/,
      },
    ];
    const sessions = await count('sessions');
    for (const v of variants) {
      expect(v.text, v.field).not.toBe(c.message);
      const signer = v.signer ?? eoa;
      const res = await verify(v.text, await signer.signMessage({ message: v.text }));
      const body = expectErrorBody(res, 401, 'AUTH_SIGNATURE_INVALID');
      expect(body.message, v.field).toMatch(v.expect);
      expect(await count('sessions'), v.field).toBe(sessions);
    }
    expect((await nonceRow(c.nonce)).used_at).toBeNull();
    expect((await nonceRow(later.nonce)).used_at).toBeNull();
    const ok = await verify(c.message, await eoa.signMessage({ message: c.message }));
    expect(ok.statusCode, ok.body).toBe(200);
    expect(await count('sessions')).toBe(sessions + 1);
  });

  it('a bad signature does not burn the nonce', async () => {
    const eoa = newEoa();
    const c = await challenge(eoa.address);
    const bad: string[] = [
      await newEoa().signMessage({ message: c.message }),
      await eoa.signMessage({ message: `${c.message} ` }),
      '0x1234',
      `0x${'00'.repeat(65)}`,
      `0x${'ab'.repeat(300)}`,
    ];
    for (const signature of bad) {
      expectErrorBody(await verify(c.message, signature), 401, 'AUTH_SIGNATURE_INVALID');
    }
    for (const signature of ['', '0x', '1234', '0x123', `0x${'zz'.repeat(65)}`]) {
      expectErrorBody(await verify(c.message, signature), 400, 'INVALID_REQUEST');
    }
    expect((await nonceRow(c.nonce)).used_at).toBeNull();
    const ok = await verify(c.message, await eoa.signMessage({ message: c.message }));
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('refuses unknown, used and expired nonces with AUTH_CHALLENGE_EXPIRED', async () => {
    const eoa = newEoa();
    const sign = (message: string) => eoa.signMessage({ message });

    const c = await challenge(eoa.address);
    const unknown = c.message.replace(c.nonce, 'UnknownNonce000000000000');
    const u = expectErrorBody(await verify(unknown, await sign(unknown)), 401, 'AUTH_CHALLENGE_EXPIRED');
    expect(u.message).toMatch(/unknown/);

    const signature = await sign(c.message);
    expect((await verify(c.message, signature)).statusCode).toBe(200);
    const used = expectErrorBody(await verify(c.message, signature), 401, 'AUTH_CHALLENGE_EXPIRED');
    expect(used.message).toMatch(/already used/);

    // Ten minutes and one millisecond later the challenge is gone: its message says so, and a
    // message rebuilt without an Expiration Time is not the challenge's message.
    const late = await challenge(eoa.address);
    const rebuilt = createSiweMessage({
      domain: late.domain,
      address: eoa.address,
      statement: SIWE_STATEMENT,
      uri: late.uri,
      version: '1',
      chainId: late.chain_id,
      nonce: late.nonce,
      issuedAt: new Date(late.issued_at),
    });
    clock.advance(10 * MINUTE + 1);
    const expired = expectErrorBody(
      await verify(late.message, await sign(late.message)),
      401,
      'AUTH_CHALLENGE_EXPIRED',
    );
    expect(expired.message).toMatch(/expired/);
    const rebuiltRefused = expectErrorBody(
      await verify(rebuilt, await sign(rebuilt)),
      401,
      'AUTH_SIGNATURE_INVALID',
    );
    expect(rebuiltRefused.message).toMatch(/Expiration Time is absent/);
    expect((await nonceRow(late.nonce)).used_at).toBeNull();

    // One millisecond before the end it still works.
    const edge = await challenge(eoa.address);
    clock.advance(10 * MINUTE - 1);
    expect((await verify(edge.message, await sign(edge.message))).statusCode).toBe(200);
  });

  it('never stores the token; an Idempotency-Key replay answers token null with a remediation', async () => {
    const eoa = newEoa();
    const c = await challenge(eoa.address);
    const signature = await eoa.signMessage({ message: c.message });
    const headers = { 'idempotency-key': `sign-in-${c.nonce}` };
    const first = await verify(c.message, signature, headers);
    expect(first.statusCode, first.body).toBe(200);
    const { token, address, expires_at } = first.json() as SignInBody;

    const replay = await verify(c.message, signature, headers);
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual({
      token: null,
      address,
      expires_at,
      remediation: SIGN_IN_REPLAY_REMEDIATION,
    });
    // Without the key it is a second use of the nonce.
    expectErrorBody(await verify(c.message, signature), 401, 'AUTH_CHALLENGE_EXPIRED');

    const account = await accountOf(address);
    expect(
      await t.deps.db.selectFrom('sessions').select('id').where('account_id', '=', account!.id).execute(),
    ).toHaveLength(1);
    // No table anywhere holds the token or its random part; only its SHA-256 is kept.
    const secret = token.slice('pss_'.length);
    const tables = await sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(t.deps.db);
    expect(tables.rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(['sessions', 'idempotency_keys', 'audit_log', 'events', 'credential_uses']),
    );
    for (const { table_name } of tables.rows) {
      const rows = await sql<{
        j: string;
      }>`SELECT row_to_json(x)::text AS j FROM ${sql.table(table_name)} x`.execute(t.deps.db);
      for (const row of rows.rows) expect(row.j.includes(secret), table_name).toBe(false);
    }
    expect((await sessionOf(token)).token_hash).toBe(hashToken(token));
  });

  it('records the network context of a sign-in: client IP and the user agent cut to 200 characters', async () => {
    const eoa = newEoa();
    const c = await challenge(eoa.address);
    const userAgent = `agent/1.0 ${'x'.repeat(300)}`;
    const res = await verify(
      c.message,
      await eoa.signMessage({ message: c.message }),
      { 'user-agent': userAgent },
      t,
      '203.0.113.7',
    );
    expect(res.statusCode, res.body).toBe(200);
    const session = await sessionOf((res.json() as SignInBody).token);
    const uses = await t.deps.db
      .selectFrom('credential_uses')
      .selectAll()
      .where('credential_id', '=', session.id)
      .execute();
    expect(uses).toHaveLength(1);
    expect(uses[0]).toMatchObject({
      account_id: session.account_id,
      client_ip: '203.0.113.7',
      user_agent: userAgent.slice(0, 200),
    });
    const context = await t.deps.db
      .selectFrom('audit_log')
      .innerJoin('network_context', 'network_context.audit_id', 'audit_log.id')
      .select(['audit_log.action', 'network_context.client_ip', 'network_context.user_agent'])
      .where('audit_log.subject', '=', session.id)
      .execute();
    expect(context).toEqual([
      { action: 'auth.sign_in', client_ip: '203.0.113.7', user_agent: userAgent.slice(0, 200) },
    ]);
  });

  it('marks a new account as a test fixture in development when asked, never an existing one', async () => {
    const fixture = newEoa();
    await signIn(fixture, { 'x-service-test-account': '1' });
    expect((await accountOf(fixture.address))?.is_test_fixture).toBe(true);

    const existing = newEoa();
    await signIn(existing);
    await signIn(existing, { 'x-service-test-account': '1' });
    expect((await accountOf(existing.address))?.is_test_fixture).toBe(false);

    const other = newEoa();
    await signIn(other, { 'x-service-test-account': 'true' });
    expect((await accountOf(other.address))?.is_test_fixture).toBe(false);
  });

  it('refuses the address of an offboarded account with 403 and a remediation', async () => {
    const eoa = newEoa();
    const { token } = await signIn(eoa);
    await sql`UPDATE accounts SET offboarded_at = ${clock.now()} WHERE address = ${eoa.address.toLowerCase()}`.execute(
      t.deps.db,
    );
    const c = await challenge(eoa.address);
    const res = await verify(c.message, await eoa.signMessage({ message: c.message }));
    const body = expectErrorBody(res, 403, 'FORBIDDEN');
    expect(body.message).toMatch(/offboarded/);
    expect(body.remediation).toMatch(/another wallet address/);
    expect(
      await t.deps.db
        .selectFrom('sessions')
        .select('id')
        .where('account_id', '=', (await accountOf(eoa.address))!.id)
        .execute(),
    ).toHaveLength(1);
    expectErrorBody(await signOut(token), 401, 'UNAUTHORIZED');
  });

  it.skipIf(!process.env.DATABASE_URL)(
    'of 20 concurrent verifies with one nonce exactly one succeeds (PostgreSQL only: PGlite has one connection)',
    async () => {
      const base = await t.app.fastify.listen({ port: 0, host: '127.0.0.1' });
      const eoa = newEoa();
      const c = await challenge(eoa.address);
      const body = JSON.stringify({
        message: c.message,
        signature: await eoa.signMessage({ message: c.message }),
      });
      const answers = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const res = await fetch(`${base}/v1/auth/verify`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
          });
          return { status: res.status, body: (await res.json()) as { code?: string; token?: string } };
        }),
      );
      const ok = answers.filter((a) => a.status === 200);
      expect(ok).toHaveLength(1);
      expect(ok[0]?.body.token).toMatch(/^pss_/);
      const refused = answers.filter((a) => a.status !== 200);
      expect(refused.map((a) => `${a.status} ${a.body.code}`)).toEqual(
        Array.from({ length: 19 }, () => '401 AUTH_CHALLENGE_EXPIRED'),
      );
      const account = await accountOf(eoa.address);
      expect(
        await t.deps.db.selectFrom('sessions').select('id').where('account_id', '=', account!.id).execute(),
      ).toHaveLength(1);
    },
  );

  it('fuzz: random bodies never give a 5xx, always the error body, and never sign anyone in', async () => {
    const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
    const eoa = newEoa();
    const c = await challenge(eoa.address);
    const lines = c.message.split('\n');
    const hex = fc.stringMatching(/^0x[0-9a-fA-F]{0,160}$/);
    // A real challenge message with one random edit: a line dropped, duplicated or rewritten.
    const edited = fc
      .record({
        at: fc.nat({ max: lines.length - 1 }),
        op: fc.constantFrom('drop', 'duplicate', 'rewrite', 'append'),
        text: fc.string({ maxLength: 40 }),
        signature: hex,
      })
      .map(({ at, op, text, signature }) => {
        const copy = [...lines];
        if (op === 'drop') copy.splice(at, 1);
        else if (op === 'duplicate') copy.splice(at, 0, copy[at] ?? '');
        else if (op === 'rewrite') copy[at] = `${(copy[at] ?? '').slice(0, 12)}${text}`;
        else copy.push(text);
        return { message: copy.join('\n'), signature };
      });
    const bodies = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record(
        {
          message: fc.oneof(fc.string(), fc.constant(c.message), fc.integer()),
          signature: fc.oneof(hex, fc.string()),
        },
        { requiredKeys: [] },
      ),
      fc.record(
        {
          address: fc.oneof(fc.stringMatching(/^0x[0-9a-fA-F]{38,42}$/), fc.string(), fc.constant(null)),
          chain_id: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constantFrom(8453, 137, 1)),
        },
        { requiredKeys: [] },
      ),
      edited,
    );
    const before = { accounts: await count('accounts'), sessions: await count('sessions') };
    const noncesBefore = await count('siwe_nonces');
    let challenges = 0;
    const seen = new Set<string>();
    const allowed = new Set([
      'INVALID_REQUEST',
      'AUTH_SIGNATURE_INVALID',
      'AUTH_CHALLENGE_EXPIRED',
      'UNSUPPORTED_MEDIA_TYPE',
    ]);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v1/auth/challenge', '/v1/auth/verify'),
        bodies,
        async (url, payload) => {
          const res = await t.app.fastify.inject({
            method: 'POST',
            url,
            headers: { 'content-type': 'application/json' },
            payload: JSON.stringify(payload) ?? 'null',
          });
          expect(res.statusCode, res.body).toBeLessThan(500);
          if (res.statusCode === 200) {
            expect(url, res.body).toBe('/v1/auth/challenge');
            challenges++;
            return;
          }
          const body = res.json() as Record<string, unknown>;
          seen.add(String(body['code']));
          checkErrorShape(body, res.headers['x-request-id'], String(body['code']));
          expect(allowed.has(String(body['code'])), res.body).toBe(true);
        },
      ),
      { numRuns: 250, seed },
    );
    expect({ accounts: await count('accounts'), sessions: await count('sessions') }).toEqual(before);
    expect(await count('siwe_nonces')).toBe(noncesBefore + challenges);
    // The generators reach past the schema into the SIWE checks.
    expect([...seen]).toEqual(expect.arrayContaining(['INVALID_REQUEST', 'AUTH_SIGNATURE_INVALID']));
    expect((await nonceRow(c.nonce)).used_at).toBeNull();
  });
});

describe('DELETE /v1/auth/session', () => {
  it('revokes the calling session; afterwards its token is refused', async () => {
    const eoa = newEoa();
    const { token } = await signIn(eoa);
    const other = await signIn(eoa);
    const session = await sessionOf(token);
    const res = await signOut(token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ revoked: true, id: session.id });
    expect((await sessionOf(token)).revoked_at).toEqual(clock.now());
    const audit = await t.deps.db
      .selectFrom('audit_log')
      .select(['action', 'actor'])
      .where('subject', '=', session.id)
      .orderBy('seq')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['auth.sign_in', 'auth.sign_out']);
    const events = await t.deps.db
      .selectFrom('events')
      .select('kind')
      .where('subject', '=', session.id)
      .orderBy('seq')
      .execute();
    expect(events.map((e) => e.kind)).toEqual(['auth.signed_in', 'auth.signed_out']);

    const again = expectErrorBody(await signOut(token), 401, 'UNAUTHORIZED');
    expect(again.message).toMatch(/revoked/);
    // Only that session: the other one of the same account still works.
    expect((await signOut(other.token)).statusCode).toBe(200);
  });

  it('a session lives 24 hours', async () => {
    const eoa = newEoa();
    const a = await signIn(eoa);
    const b = await signIn(eoa);
    clock.advance(DAY - 1);
    expect((await signOut(a.token)).statusCode).toBe(200);
    clock.advance(1);
    const expired = expectErrorBody(await signOut(b.token), 401, 'UNAUTHORIZED');
    expect(expired.message).toMatch(/expired/);
  });

  it('needs a bearer credential, and refuses an API key with 403', async () => {
    expectErrorBody(
      await t.app.fastify.inject({ method: 'DELETE', url: '/v1/auth/session' }),
      401,
      'UNAUTHORIZED',
    );
    const eoa = newEoa();
    await signIn(eoa);
    const account = await accountOf(eoa.address);
    const key = newToken('psk_');
    const keyId = 'key_signouttest00000000';
    await t.deps.db
      .insertInto('api_keys')
      .values({
        id: keyId,
        account_id: account!.id,
        name: null,
        token_hash: hashToken(key),
        scopes: ['admin'],
        wallets: null,
        allowed_ips: null,
        created_at: clock.now(),
        expires_at: new Date(clock.now().getTime() + 90 * DAY),
        revoked_at: null,
        rotated_to: null,
        rotated_from: null,
        created_by: 'session:test',
      })
      .execute();
    const res = await t.app.fastify.inject({
      method: 'DELETE',
      url: '/v1/auth/session',
      headers: { authorization: `Bearer ${key}` },
    });
    const body = expectErrorBody(res, 403, 'FORBIDDEN');
    expect(body.next?.[0]).toMatchObject({ method: 'DELETE', path: `/v1/keys/${keyId}` });
    const still = await t.deps.db
      .selectFrom('api_keys')
      .select('revoked_at')
      .where('id', '=', keyId)
      .executeTakeFirstOrThrow();
    expect(still.revoked_at).toBeNull();
  });
});

describe('in production, and with chains missing or down', () => {
  let p: TestApp;
  const DOWN = 'http://127.0.0.1:1';
  beforeAll(async () => {
    p = await createTestApp({
      clock,
      config: { env: 'production', siwe: SIWE, publicRateLimitPerMinute: 1_000_000 },
      deps: {
        chain: createViemChainPort({
          rpcUrls: { 8453: devnetChain(devnet, 8453).rpcUrl, 84532: DOWN },
          retryCount: 0,
          requestTimeoutMs: 2_000,
        }),
      },
    });
  });
  afterAll(async () => {
    await p?.close();
  });

  it('ignores the test-account header', async () => {
    const eoa = newEoa();
    await signIn(eoa, { 'x-service-test-account': '1' }, p);
    expect((await accountOf(eoa.address, p.deps.db))?.is_test_fixture).toBe(false);
  });

  it('answers 503 UNAVAILABLE for a chain without an RPC endpoint, leaving the nonce usable', async () => {
    const eoa = newEoa();
    const c = await challenge(eoa.address, 137, p);
    const body = expectErrorBody(
      await verify(c.message, await eoa.signMessage({ message: c.message }), {}, p),
      503,
      'UNAVAILABLE',
    );
    expect(body.message).toMatch(/chain 137/);
  });

  it('answers 503 when the chain cannot be reached to refute a signature; an EOA still signs in', async () => {
    const eoa = newEoa();
    const c = await challenge(eoa.address, 84532, p);
    const wrong = await newEoa().signMessage({ message: c.message });
    const down = expectErrorBody(await verify(c.message, wrong, {}, p), 503, 'UNAVAILABLE');
    expect(down.message).toMatch(/did not answer/);
    // viem falls back to ecrecover when the chain is unreachable: an EOA needs no RPC.
    const ok = await verify(c.message, await eoa.signMessage({ message: c.message }), {}, p);
    expect(ok.statusCode, ok.body).toBe(200);
  });
});
