// The judge of the CLOB fake: Polymarket's own client, @polymarket/clob-client-v2 1.1.0, pointed at
// it unchanged (chain 137, a viem wallet as signer). What the client accepts and what it reports
// is what counts; the fake's own hooks only set the scene (markets, funders, fills, balances).

import {
  ApiError,
  AssetType,
  ClobClient,
  OrderType,
  Side,
  SignatureTypeV2,
  type ApiKeyCreds,
  type OpenOrder,
  type OrderResponse,
  type SignedOrder,
  type Trade,
} from '@polymarket/clob-client-v2';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPublicClient,
  createWalletClient,
  custom,
  erc20Abi,
  hashTypedData,
  http,
  keccak256,
  recoverTypedDataAddress,
  toHex,
  type Address,
  type Hex,
  type WalletClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { compileSources } from '../../../devnet/compile.ts';
import { chainDefinition } from '../../adapters/chain/viem.ts';
import {
  buildClobL1Headers,
  CTF_EXCHANGE_V2,
  orderHashV2,
  orderTypedDataV2,
} from '../../adapters/pm-venue/polymarket.ts';
import type { ClobSignedOrderV2 } from '../../adapters/pm-venue/port.ts';
import { ManualClock } from '../../core/clock.ts';
import { devnetChain } from '../devnet.ts';
import { newFundedAccount } from '../faucet.ts';
import {
  CLOB_END_CURSOR,
  CLOB_INITIAL_CURSOR,
  startClobFake,
  type ClobFake,
  type ClobFakeMarket,
} from './clob.ts';

const tokenId = (label: string) => BigInt(keccak256(toHex(label))).toString();
const MARKET: ClobFakeMarket = {
  conditionId: keccak256(toHex('clob test market')),
  tokens: [
    { tokenId: tokenId('clob test market yes'), outcome: 'Yes' },
    { tokenId: tokenId('clob test market no'), outcome: 'No' },
  ],
  tickSize: '0.01',
  minOrderSize: 5,
};
const NEG_RISK_MARKET: ClobFakeMarket = {
  conditionId: keccak256(toHex('clob test neg-risk market')),
  tokens: [
    { tokenId: tokenId('clob test candidate a'), outcome: 'Yes' },
    { tokenId: tokenId('clob test candidate a no'), outcome: 'No' },
  ],
  tickSize: '0.001',
  negRisk: true,
  minOrderSize: 5,
};
const YES = MARKET.tokens[0].tokenId;
const NO = MARKET.tokens[1].tokenId;
const CANDIDATE = NEG_RISK_MARKET.tokens[0].tokenId;
const MAX_UINT256 = (2n ** 256n - 1n).toString();

let fake: ClobFake;

beforeAll(async () => {
  fake = await startClobFake({ markets: [MARKET, NEG_RISK_MARKET] });
});
afterAll(async () => {
  await fake.stop();
});
beforeEach(() => {
  fake.reset();
});

/** A viem wallet client that signs locally and records the typed data it was asked to sign. */
function walletFor(key: Hex = generatePrivateKey()): {
  signer: WalletClient;
  address: Address;
  signed: unknown[];
} {
  const account = privateKeyToAccount(key);
  const base = createWalletClient({
    account,
    transport: custom({
      request: async () => {
        throw new Error('no RPC in these tests');
      },
    }),
  });
  const signed: unknown[] = [];
  const signer = {
    ...base,
    signTypedData: (async (args: Parameters<typeof base.signTypedData>[0]) => {
      signed.push(args);
      return base.signTypedData(args);
    }) as typeof base.signTypedData,
  } as WalletClient;
  return { signer, address: account.address, signed };
}

interface Trader {
  client: ClobClient;
  /** The same account and key, answering errors by throwing ApiError. */
  strict: ClobClient;
  creds: ApiKeyCreds;
  address: Address;
  signer: WalletClient;
  signed: unknown[];
}

async function trader(
  opts: { signatureType?: SignatureTypeV2; funder?: Address; key?: Hex; url?: string } = {},
): Promise<Trader> {
  const host = opts.url ?? fake.url;
  const { signer, address, signed } = walletFor(opts.key);
  const creds = await new ClobClient({ host, chain: 137, signer }).createOrDeriveApiKey();
  const common = {
    host,
    chain: 137,
    signer,
    creds,
    ...(opts.signatureType === undefined ? {} : { signatureType: opts.signatureType }),
    ...(opts.funder === undefined ? {} : { funderAddress: opts.funder }),
  };
  return {
    client: new ClobClient(common),
    strict: new ClobClient({ ...common, throwOnError: true }),
    creds,
    address,
    signer,
    signed,
  };
}

function v2(order: SignedOrder): ClobSignedOrderV2 {
  if (!('timestamp' in order)) throw new Error('expected a V2 order');
  return order as unknown as ClobSignedOrderV2;
}

/** Resolves to the error the client reports (a returned `{error, status}` or a thrown ApiError). */
async function apiError(p: Promise<unknown>): Promise<{ error: unknown; status: unknown }> {
  try {
    const result = (await p) as { error?: unknown; status?: unknown };
    if (result && typeof result === 'object' && 'error' in result)
      return { error: result.error, status: result.status };
    throw new Error(`expected an error, got ${JSON.stringify(result)}`);
  } catch (err) {
    if (err instanceof ApiError) return { error: err.message, status: err.status };
    throw err;
  }
}

async function place(
  t: Trader,
  order: { tokenID: string; price: number; size: number; side: Side; expiration?: number },
  type: OrderType.GTC | OrderType.GTD = OrderType.GTC,
): Promise<OrderResponse & { order: ClobSignedOrderV2 }> {
  const signed = await t.client.createOrder(order);
  const response = await t.strict.postOrder(signed, type);
  return { ...response, order: v2(signed) };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('CLOB fake: public endpoints', () => {
  it('answers the server time in unix seconds, version 2 and ok', async () => {
    const client = new ClobClient({ host: fake.url, chain: 137 });
    const time = await client.getServerTime();
    expect(typeof time).toBe('number');
    expect(Math.abs(time - nowSeconds())).toBeLessThanOrEqual(2);
    expect(await client.getVersion()).toBe(2);
    expect(await client.getOk()).toBe('OK');
  });

  it('serves the market data the client reads while building orders', async () => {
    const client = new ClobClient({ host: fake.url, chain: 137 });
    expect(await client.getTickSize(YES)).toBe('0.01');
    expect(await client.getNegRisk(YES)).toBe(false);
    expect(await client.getNegRisk(CANDIDATE)).toBe(true);
    const info = await client.getClobMarketInfo(NEG_RISK_MARKET.conditionId);
    expect(info.t.map((t) => t.t)).toEqual(NEG_RISK_MARKET.tokens.map((t) => t.tokenId));
    expect(info.mts).toBe(0.001);
    const book = await client.getOrderBook(YES);
    expect(book).toMatchObject({
      market: MARKET.conditionId,
      asset_id: YES,
      tick_size: '0.01',
      neg_risk: false,
    });
    const strict = new ClobClient({ host: fake.url, chain: 137, throwOnError: true });
    await expect(strict.getTickSize(tokenId('no such token'))).rejects.toMatchObject({
      message: 'market not found',
      status: 404,
    });
  });
});

describe('CLOB fake: market discovery', () => {
  it('lists its markets to the official client, full and simplified, sampling or not, paged by cursor', async () => {
    const client = new ClobClient({ host: fake.url, chain: 137 });
    const first = await client.getMarkets();
    expect(first).toMatchObject({ count: 2, next_cursor: CLOB_END_CURSOR });
    const conditions = [MARKET.conditionId, NEG_RISK_MARKET.conditionId];
    expect(first.data.map((m: { condition_id: string }) => m.condition_id)).toEqual(conditions);
    // What an agent needs to trade one: its tokens and outcomes, tick, minimum size, neg-risk.
    expect(first.data[1]).toMatchObject({
      condition_id: NEG_RISK_MARKET.conditionId,
      tokens: NEG_RISK_MARKET.tokens.map((t) => ({ token_id: t.tokenId, outcome: t.outcome })),
      minimum_tick_size: 0.001,
      neg_risk: true,
      active: true,
      closed: false,
      accepting_orders: true,
    });
    const simplified = await client.getSimplifiedMarkets();
    expect(Object.keys(simplified.data[0]).sort()).toEqual(
      ['accepting_orders', 'active', 'archived', 'closed', 'condition_id', 'rewards', 'tokens'].sort(),
    );
    expect((await client.getSamplingMarkets()).data).toEqual(first.data);
    expect((await client.getSamplingSimplifiedMarkets()).data).toEqual(simplified.data);
    // One market a page: the cursor walks to the end as the client's own loops do.
    fake.knobs.pageSize = 1;
    const page1 = await client.getMarkets();
    expect(page1).toMatchObject({ limit: 1, count: 1, next_cursor: 'MQ==' });
    const page2 = await client.getMarkets(page1.next_cursor);
    expect(page2).toMatchObject({ count: 1, next_cursor: CLOB_END_CURSOR });
    expect([...page1.data, ...page2.data].map((m: { condition_id: string }) => m.condition_id)).toEqual(
      conditions,
    );
    const strict = new ClobClient({ host: fake.url, chain: 137, throwOnError: true });
    await expect(strict.getMarkets('not-a-cursor')).rejects.toMatchObject({ status: 400 });
  });
});

describe('CLOB fake: API keys (L1)', () => {
  it('creates a key, derives the same one, refuses a second create, and createOrDerive falls back', async () => {
    const { signer, address } = walletFor();
    const l1 = new ClobClient({ host: fake.url, chain: 137, signer });
    const l1Strict = new ClobClient({ host: fake.url, chain: 137, signer, throwOnError: true });

    // The client reads a refused derive as a credential of undefined fields; strict, it throws.
    expect(await l1.deriveApiKey()).toEqual({ key: undefined, secret: undefined, passphrase: undefined });
    expect(await apiError(l1Strict.deriveApiKey())).toEqual({
      error: 'Could not derive api key!',
      status: 400,
    });
    const created = await l1.createApiKey();
    expect(created.key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(created.secret).toMatch(/^[A-Za-z0-9_-]{43}=$/);
    expect(Buffer.from(created.secret, 'base64url')).toHaveLength(32);
    expect(created.passphrase).toMatch(/^[0-9a-f]{64}$/);

    expect(await l1.deriveApiKey()).toEqual(created);
    await expect(l1Strict.createApiKey()).rejects.toMatchObject({
      message: 'Could not create api key',
      status: 400,
    });
    expect(await l1.createOrDeriveApiKey()).toEqual(created);

    // Another nonce is another key; the address lists both.
    const second = await l1.createOrDeriveApiKey(7);
    expect(second.key).not.toBe(created.key);
    expect(await l1.deriveApiKey(7)).toEqual(second);
    const client = new ClobClient({ host: fake.url, chain: 137, signer, creds: created });
    const listed = await client.getApiKeys();
    expect(new Set((listed as unknown as { apiKeys: string[] }).apiKeys)).toEqual(
      new Set([created.key, second.key]),
    );
    expect(fake.apiKeys(address)).toHaveLength(2);
  });

  it('deletes the calling key: it stops working and can be created again', async () => {
    const t = await trader();
    expect(await t.client.deleteApiKey()).toBe('OK');
    expect(await apiError(t.client.getApiKeys())).toEqual({
      error: 'Unauthorized/Invalid api key',
      status: 401,
    });
    expect(await apiError(t.strict.deriveApiKey())).toEqual({
      error: 'Could not derive api key!',
      status: 400,
    });
    const again = await t.client.createApiKey();
    expect(again.key).not.toBe(t.creds.key);
  });

  it('refuses L1 headers that are stale or signed by another key', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const stale = await buildClobL1Headers({ account, chainId: 137, timestamp: nowSeconds() - 3600 });
    let res = await fetch(`${fake.url}/auth/api-key`, { method: 'POST', headers: { ...stale } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'Invalid L1 Request headers' });

    const other = privateKeyToAccount(generatePrivateKey());
    const signedByOther = await buildClobL1Headers({ account: other, chainId: 137, timestamp: nowSeconds() });
    res = await fetch(`${fake.url}/auth/derive-api-key`, {
      headers: { ...signedByOther, POLY_ADDRESS: account.address },
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'Invalid L1 Request headers' });

    // Signed for another chain.
    const wrongChain = await buildClobL1Headers({ account, chainId: 80002, timestamp: nowSeconds() });
    res = await fetch(`${fake.url}/auth/api-key`, { method: 'POST', headers: { ...wrongChain } });
    expect(res.status).toBe(401);
  });
});

describe('CLOB fake: L2 authentication', () => {
  it('answers 401 with the CLOB body for a wrong passphrase, secret, key or address', async () => {
    const t = await trader();
    const other = walletFor();
    const cases: ApiKeyCreds[] = [
      { ...t.creds, passphrase: 'f'.repeat(64) },
      { ...t.creds, secret: Buffer.alloc(32, 7).toString('base64url') },
      { ...t.creds, key: '00000000-0000-4000-8000-000000000001' },
    ];
    for (const creds of cases) {
      const client = new ClobClient({ host: fake.url, chain: 137, signer: walletFor().signer, creds });
      // The signer differs too for these; the key's own address with a bad field is below.
      expect(await apiError(client.getApiKeys())).toEqual({
        error: 'Unauthorized/Invalid api key',
        status: 401,
      });
    }
    const ownSigner = new ClobClient({
      host: fake.url,
      chain: 137,
      signer: other.signer,
      creds: t.creds,
      throwOnError: true,
    });
    await expect(ownSigner.getOpenOrders()).rejects.toMatchObject({
      message: 'Unauthorized/Invalid api key',
      status: 401,
      data: { error: 'Unauthorized/Invalid api key', status: 401 },
    });
    const wrongPassphrase = new ClobClient({
      host: fake.url,
      chain: 137,
      signer: walletFor().signer,
      creds: { ...t.creds, passphrase: 'a'.repeat(64) },
    });
    expect(await apiError(wrongPassphrase.getBalanceAllowance({ asset_type: AssetType.COLLATERAL }))).toEqual(
      {
        error: 'Unauthorized/Invalid api key',
        status: 401,
      },
    );
    // The right credentials pass.
    expect(await t.client.getApiKeys()).toEqual({ apiKeys: [t.creds.key] });
  });

  it('never keeps a passphrase or signature in its request log', async () => {
    const t = await trader();
    await t.client.getApiKeys();
    const log = JSON.stringify(fake.requests);
    expect(log).not.toContain(t.creds.passphrase);
    expect(log).not.toContain(t.creds.secret);
    const authed = fake.requests.filter((r) => r.path === '/auth/api-keys');
    expect(authed.at(-1)?.headers.poly_passphrase).toBe('[redacted]');
  });
});

describe('CLOB fake: orders', () => {
  it("signs what the adapter's typed data says: same EIP-712 hash, the order id is that hash", async () => {
    const t = await trader();
    for (const tokenID of [YES, CANDIDATE]) {
      const negRisk = tokenID === CANDIDATE;
      const before = t.signed.length;
      const posted = await place(t, { tokenID, price: negRisk ? 0.123 : 0.42, size: 10, side: Side.BUY });
      const clientSigned = t.signed[before] as Parameters<typeof hashTypedData>[0];
      expect(t.signed).toHaveLength(before + 1);
      const ours = orderTypedDataV2(posted.order, { chainId: 137, negRisk });
      expect(ours.domain?.verifyingContract).toBe(
        negRisk ? CTF_EXCHANGE_V2[137]!.negRiskExchange : CTF_EXCHANGE_V2[137]!.exchange,
      );
      expect(hashTypedData(ours)).toBe(hashTypedData(clientSigned));
      expect(posted.orderID).toBe(orderHashV2(posted.order, { chainId: 137, negRisk }).toLowerCase());
      expect(await recoverTypedDataAddress({ ...ours, signature: posted.order.signature })).toBe(t.address);
    }
  });

  it('takes EOA orders (type 0), BUY and SELL, GTC and GTD, and reports them as open orders', async () => {
    const t = await trader();
    const buy = await place(t, { tokenID: YES, price: 0.55, size: 10, side: Side.BUY });
    expect(buy).toMatchObject({
      success: true,
      errorMsg: '',
      status: 'live',
      takingAmount: '',
      makingAmount: '',
    });
    expect(buy.order.makerAmount).toBe('5500000');
    expect(buy.order.takerAmount).toBe('10000000');

    const expiration = nowSeconds() + 3600;
    const sell = await place(
      t,
      { tokenID: NO, price: 0.7, size: 12.5, side: Side.SELL, expiration },
      OrderType.GTD,
    );
    expect(sell.status).toBe('live');

    const read: OpenOrder = await t.client.getOrder(buy.orderID);
    expect(read).toMatchObject({
      id: buy.orderID,
      status: 'LIVE',
      owner: t.creds.key,
      maker_address: t.address,
      market: MARKET.conditionId,
      asset_id: YES,
      side: 'BUY',
      original_size: '10',
      size_matched: '0',
      price: '0.55',
      associate_trades: [],
      outcome: 'Yes',
      expiration: '0',
      order_type: 'GTC',
    });
    expect(await t.client.getOrder(sell.orderID)).toMatchObject({
      side: 'SELL',
      original_size: '12.5',
      price: '0.7',
      order_type: 'GTD',
      expiration: String(expiration),
      outcome: 'No',
    });
    const open = await t.client.getOpenOrders();
    expect(open.map((o) => o.id).sort()).toEqual([buy.orderID, sell.orderID].sort());
  });

  it('takes proxy (type 1) and Safe (type 2) orders for a registered funder, and refuses an unknown one', async () => {
    const key = generatePrivateKey();
    const signerAddress = privateKeyToAccount(key).address;
    const proxy = privateKeyToAccount(generatePrivateKey()).address;
    const safe = privateKeyToAccount(generatePrivateKey()).address;
    fake.registerFunder(proxy, signerAddress, 1);
    fake.registerFunder(safe, signerAddress, 2);

    const viaProxy = await trader({ key, signatureType: SignatureTypeV2.POLY_PROXY, funder: proxy });
    const p = await place(viaProxy, { tokenID: YES, price: 0.3, size: 20, side: Side.BUY });
    expect(p.status).toBe('live');
    expect(p.order).toMatchObject({ maker: proxy, signer: signerAddress, signatureType: 1 });
    expect(await viaProxy.client.getOrder(p.orderID)).toMatchObject({
      maker_address: proxy,
      owner: viaProxy.creds.key,
    });

    const viaSafe = await trader({ key, signatureType: SignatureTypeV2.POLY_GNOSIS_SAFE, funder: safe });
    const s = await place(viaSafe, { tokenID: CANDIDATE, price: 0.815, size: 6, side: Side.SELL });
    expect(s.status).toBe('live');
    expect(s.order).toMatchObject({ maker: safe, signatureType: 2 });
    const sBuy = await place(viaSafe, { tokenID: CANDIDATE, price: 0.2, size: 6, side: Side.BUY });
    expect(sBuy.status).toBe('live');

    // The Safe registered for type 2 is no proxy (type 1); an unregistered Safe is nobody's.
    const wrongType = await trader({ key, signatureType: SignatureTypeV2.POLY_PROXY, funder: safe });
    const refused = await wrongType.client.postOrder(
      await wrongType.client.createOrder({ tokenID: YES, price: 0.3, size: 5, side: Side.BUY }),
    );
    expect(refused).toEqual({ error: 'invalid signature', status: 400 });
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    const unknown = await trader({ key, signatureType: SignatureTypeV2.POLY_GNOSIS_SAFE, funder: stranger });
    await expect(
      unknown.strict.postOrder(
        await unknown.client.createOrder({ tokenID: YES, price: 0.3, size: 5, side: Side.BUY }),
      ),
    ).rejects.toMatchObject({ message: 'invalid signature', status: 400 });
  });

  it('matches a crossing order at the resting price, partially, and lists the trade for both sides', async () => {
    const maker = await trader();
    const taker = await trader();
    const ask = await place(maker, { tokenID: YES, price: 0.6, size: 20, side: Side.SELL });
    // A BUY at 0.65 crosses the ask at 0.60 and fills 8 of its 20 at 0.60.
    const bid = await place(taker, { tokenID: YES, price: 0.65, size: 8, side: Side.BUY });
    expect(bid).toMatchObject({ success: true, status: 'matched', makingAmount: '4.8', takingAmount: '8' });
    expect(bid.tradeIDs).toHaveLength(1);
    expect(bid.transactionsHashes).toHaveLength(1);
    expect(bid.transactionsHashes?.[0]).toMatch(/^0x[0-9a-f]{64}$/);

    expect(await maker.client.getOrder(ask.orderID)).toMatchObject({
      status: 'LIVE',
      size_matched: '8',
      associate_trades: bid.tradeIDs,
    });
    expect(await taker.client.getOrder(bid.orderID)).toMatchObject({ status: 'MATCHED', size_matched: '8' });

    const [takerTrade] = await taker.client.getTrades({ id: bid.tradeIDs![0]! });
    expect(takerTrade).toMatchObject({
      id: bid.tradeIDs![0],
      taker_order_id: bid.orderID,
      market: MARKET.conditionId,
      asset_id: YES,
      side: 'BUY',
      size: '8',
      price: '0.6',
      status: 'CONFIRMED',
      outcome: 'Yes',
      owner: taker.creds.key,
      maker_address: taker.address,
      trader_side: 'TAKER',
      transaction_hash: bid.transactionsHashes![0],
    });
    expect(takerTrade?.maker_orders).toEqual([
      expect.objectContaining({
        order_id: ask.orderID,
        owner: maker.creds.key,
        maker_address: maker.address,
        matched_amount: '8',
        price: '0.6',
        side: 'SELL',
      }),
    ]);
    const makerTrades: Trade[] = await maker.client.getTrades({ market: MARKET.conditionId });
    expect(makerTrades.map((tr) => [tr.id, tr.trader_side])).toContainEqual([bid.tradeIDs![0], 'MAKER']);

    // The rest of the ask sits on the book.
    const book = await taker.client.getOrderBook(YES);
    expect(book.asks).toContainEqual({ price: '0.6', size: '12' });
  });

  it('fills market orders: FOK all or nothing, FAK what it can', async () => {
    const maker = await trader();
    const taker = await trader();
    await place(maker, { tokenID: NO, price: 0.4, size: 10, side: Side.SELL });
    const fok = await taker.strict.createAndPostMarketOrder(
      { tokenID: NO, amount: 2, side: Side.BUY, price: 0.4 },
      undefined,
      OrderType.FOK,
    );
    expect(fok).toMatchObject({ success: true, status: 'matched', makingAmount: '2', takingAmount: '5' });
    const tooMuch = await taker.client.postOrder(
      await taker.client.createMarketOrder({ tokenID: NO, amount: 50, side: Side.BUY, price: 0.4 }),
      OrderType.FOK,
    );
    expect(tooMuch).toEqual({
      error: "order couldn't be fully filled. FOK orders are fully filled or killed.",
      status: 400,
    });
    const fak = await taker.strict.postOrder(
      await taker.client.createMarketOrder({ tokenID: NO, amount: 50, side: Side.BUY, price: 0.4 }),
      OrderType.FAK,
    );
    expect(fak).toMatchObject({ status: 'matched', takingAmount: '5' });
  });

  it('posts a batch and answers each order in the array', async () => {
    const t = await trader();
    const a = await t.client.createOrder({ tokenID: YES, price: 0.11, size: 5, side: Side.BUY });
    const b = await t.client.createOrder({ tokenID: NO, price: 0.88, size: 5, side: Side.SELL });
    const tooSmall = await t.client.createOrder({ tokenID: YES, price: 0.12, size: 1, side: Side.BUY });
    const results = await t.strict.postOrders([
      { order: a, orderType: OrderType.GTC },
      { order: b, orderType: OrderType.GTC },
      { order: tooSmall, orderType: OrderType.GTC },
    ]);
    expect(results).toHaveLength(3);
    expect(results[0]).toMatchObject({ success: true, status: 'live' });
    expect(results[1]).toMatchObject({ success: true, status: 'live' });
    const tooSmallId = orderHashV2(v2(tooSmall), { chainId: 137, negRisk: false }).toLowerCase();
    expect(results[2]).toMatchObject({
      success: false,
      errorMsg: `order ${tooSmallId} is invalid. Size (1) lower than the minimum: 5`,
    });
    const open = await t.client.getOpenOrders();
    expect(open.map((o) => o.id).sort()).toEqual([results[0]!.orderID, results[1]!.orderID].sort());
  });

  it('lists open orders by market and pages through them the way the client walks', async () => {
    const t = await trader();
    const inYes = [];
    for (const price of [0.21, 0.22, 0.23])
      inYes.push((await place(t, { tokenID: YES, price, size: 5, side: Side.BUY })).orderID);
    const inNegRisk = await place(t, { tokenID: CANDIDATE, price: 0.5, size: 5, side: Side.BUY });
    fake.knobs.pageSize = 2;
    const seen = fake.requests.length;
    const byMarket = await t.client.getOpenOrders({ market: MARKET.conditionId });
    expect(byMarket.map((o) => o.id)).toEqual(inYes);
    const cursors = fake.requests
      .slice(seen)
      .filter((r) => r.path === '/data/orders')
      .map((r) => r.query.next_cursor);
    expect(cursors).toEqual([CLOB_INITIAL_CURSOR, 'Mg==']);
    expect(await t.client.getOpenOrders({ asset_id: CANDIDATE })).toEqual([
      expect.objectContaining({ id: inNegRisk.orderID }),
    ]);
    expect(await t.client.getOpenOrders({ id: inYes[1]! })).toHaveLength(1);
  });

  it('pages trades with next_cursor until LTE=, and filters them', async () => {
    const t = await trader();
    const resting = await place(t, { tokenID: YES, price: 0.3, size: 50, side: Side.BUY });
    const fills = [];
    for (let i = 0; i < 5; i++) fills.push(fake.fill(resting.orderID as Hex, 5));
    expect(fills.every((f) => f.trader_side === 'MAKER' && f.size === '5' && f.side === 'SELL')).toBe(true);
    fake.knobs.pageSize = 2;

    const first = await t.client.getTradesPaginated({ asset_id: YES });
    expect(first.trades).toHaveLength(2);
    expect(first.next_cursor).toBe('Mg==');
    const seen = fake.requests.length;
    const all = await t.client.getTrades({ asset_id: YES });
    expect(all.map((tr) => tr.id).sort()).toEqual(fills.map((f) => f.id).sort());
    const pages = fake.requests.slice(seen).filter((r) => r.path === '/data/trades');
    expect(pages.map((r) => r.query.next_cursor)).toEqual([CLOB_INITIAL_CURSOR, 'Mg==', 'NA==']);
    const last = await t.client.getTradesPaginated({ asset_id: YES }, 'NA==');
    expect(last.next_cursor).toBe(CLOB_END_CURSOR);

    expect(await t.client.getTrades({ asset_id: NO })).toEqual([]);
    expect(await t.client.getTrades({ maker_address: t.address })).toHaveLength(5);
    expect(await t.client.getTrades({ after: String(nowSeconds() + 100) })).toEqual([]);
    expect(await t.client.getOrder(resting.orderID)).toMatchObject({ size_matched: '25', status: 'LIVE' });
    // The last fill takes what is left and the order is done.
    expect(fake.fill(resting.orderID as Hex).size).toBe('25');
    expect(await t.client.getOrder(resting.orderID)).toMatchObject({ size_matched: '50', status: 'MATCHED' });
  });

  it('reads a trade as the settlement moves it on', async () => {
    const t = await trader();
    fake.knobs.settlement = 'matched';
    const resting = await place(t, { tokenID: NO, price: 0.35, size: 5, side: Side.SELL });
    const trade = fake.fill(resting.orderID as Hex);
    expect(trade).toMatchObject({ status: 'MATCHED', transaction_hash: '' });
    const hash = keccak256(toHex('a settlement'));
    fake.settleTrade(trade.id, { status: 'MINED', transactionHash: hash });
    expect(await t.client.getTrades({ id: trade.id })).toEqual([
      expect.objectContaining({ status: 'MINED', transaction_hash: hash }),
    ]);
  });
});

describe('CLOB fake: cancels', () => {
  it('cancels one, several, a market and all, in the CLOB answer shape', async () => {
    const t = await trader();
    const ids: string[] = [];
    for (const [tokenID, price] of [
      [YES, 0.1],
      [YES, 0.11],
      [NO, 0.12],
      [NO, 0.13],
      [CANDIDATE, 0.101],
      [CANDIDATE, 0.102],
    ] as const) {
      ids.push((await place(t, { tokenID, price, size: 5, side: Side.BUY })).orderID);
    }
    expect(await t.client.cancelOrder({ orderID: ids[0]! })).toEqual({
      canceled: [ids[0]],
      not_canceled: {},
    });
    expect(await t.client.cancelOrder({ orderID: ids[0]! })).toEqual({
      canceled: [],
      not_canceled: { [ids[0]!]: 'Order not found or already canceled' },
    });
    expect(await t.client.getOrder(ids[0]!)).toMatchObject({ status: 'CANCELED' });

    const unknown = keccak256(toHex('not an order'));
    expect(await t.client.cancelOrders([ids[1]!, unknown])).toEqual({
      canceled: [ids[1]],
      not_canceled: { [unknown]: 'Order not found or already canceled' },
    });
    const byAsset = await t.client.cancelMarketOrders({ asset_id: NO });
    expect((byAsset as { canceled: string[] }).canceled.sort()).toEqual([ids[2], ids[3]].sort());
    // Someone else's order is not ours to cancel.
    const other = await trader();
    const theirs = await place(other, { tokenID: YES, price: 0.14, size: 5, side: Side.BUY });
    expect(await t.client.cancelOrder({ orderID: theirs.orderID })).toMatchObject({ canceled: [] });
    const all = await t.client.cancelAll();
    expect((all as { canceled: string[] }).canceled.sort()).toEqual([ids[4], ids[5]].sort());
    expect(await t.client.getOpenOrders()).toEqual([]);
    expect(await other.client.getOpenOrders()).toHaveLength(1);

    const more = await place(t, { tokenID: CANDIDATE, price: 0.103, size: 5, side: Side.BUY });
    expect(await t.client.cancelMarketOrders({ market: NEG_RISK_MARKET.conditionId })).toEqual({
      canceled: [more.orderID],
      not_canceled: {},
    });
  });
});

describe('CLOB fake: balances and allowances', () => {
  it('answers the table for the funder the signature type names', async () => {
    const key = generatePrivateKey();
    const eoa = privateKeyToAccount(key).address;
    const safe = privateKeyToAccount(generatePrivateKey()).address;
    fake.registerFunder(safe, eoa, 2);
    fake.setBalance(eoa, 'COLLATERAL', 12_000_000n);
    fake.setBalance(safe, 'COLLATERAL', 99_500_000n, { [fake.exchange]: 5_000_000n });
    fake.setBalance(safe, { tokenId: YES }, 7_000_000n);

    const direct = await trader({ key });
    const collateral = await direct.client.getBalanceAllowance({ asset_type: AssetType.COLLATERAL });
    expect(collateral.balance).toBe('12000000');
    expect(collateral.allowances).toEqual(Object.fromEntries(fake.spenders.map((s) => [s, MAX_UINT256])));

    const viaSafe = await trader({ key, signatureType: SignatureTypeV2.POLY_GNOSIS_SAFE, funder: safe });
    expect(await viaSafe.client.getBalanceAllowance({ asset_type: AssetType.COLLATERAL })).toEqual({
      balance: '99500000',
      allowances: { [fake.spenders[0]!]: '5000000', [fake.spenders[1]!]: '0', [fake.spenders[2]!]: '0' },
    });
    expect(
      (await viaSafe.client.getBalanceAllowance({ asset_type: AssetType.CONDITIONAL, token_id: YES }))
        .balance,
    ).toBe('7000000');
    const seen = fake.requests.length;
    expect(await viaSafe.client.updateBalanceAllowance({ asset_type: AssetType.COLLATERAL })).toBe('');
    expect(fake.requests[seen]).toMatchObject({
      path: '/balance-allowance/update',
      query: { asset_type: 'COLLATERAL', signature_type: '2' },
    });
    expect(
      await apiError(viaSafe.client.getBalanceAllowance({ asset_type: 'SHARES' as unknown as AssetType })),
    ).toEqual({ error: 'Invalid asset type', status: 400 });
  });

  it('refuses an order the balance or allowance cannot cover when enforcing them', async () => {
    const t = await trader();
    fake.knobs.enforceBalances = true;
    const order = await t.client.createOrder({ tokenID: YES, price: 0.5, size: 10, side: Side.BUY });
    expect(await t.client.postOrder(order)).toEqual({ error: 'not enough balance / allowance', status: 400 });
    fake.setBalance(t.address, 'COLLATERAL', 6_000_000n);
    expect(await t.strict.postOrder(order)).toMatchObject({ success: true, status: 'live' });
    // 5 of the 6 are held by the open order now.
    const second = await t.client.createOrder({ tokenID: NO, price: 0.5, size: 10, side: Side.BUY });
    expect(await t.client.postOrder(second)).toEqual({
      error: 'not enough balance / allowance',
      status: 400,
    });
    const sell = await t.client.createOrder({ tokenID: NO, price: 0.5, size: 10, side: Side.SELL });
    expect(await t.client.postOrder(sell)).toEqual({ error: 'not enough balance / allowance', status: 400 });
  });
});

describe('CLOB fake: refusals a user would notice', () => {
  it('refuses a tampered signature, an unknown token, an off-grid price, a duplicate and a short GTD', async () => {
    const t = await trader();
    const good = await t.client.createOrder({ tokenID: YES, price: 0.45, size: 10, side: Side.BUY });
    const tampered = { ...v2(good), makerAmount: '4600000' } as unknown as SignedOrder;
    expect(await t.client.postOrder(tampered)).toEqual({ error: 'invalid signature', status: 400 });

    // An order for a token another venue lists (built there) and this one does not.
    const strangerMarket: ClobFakeMarket = {
      conditionId: keccak256(toHex('a market nobody here lists')),
      tokens: [
        { tokenId: tokenId('elsewhere yes'), outcome: 'Yes' },
        { tokenId: tokenId('elsewhere no'), outcome: 'No' },
      ],
      tickSize: '0.01',
    };
    const elsewhere = await startClobFake({ markets: [strangerMarket] });
    try {
      const builtElsewhere = await new ClobClient({
        host: elsewhere.url,
        chain: 137,
        signer: t.signer,
      }).createOrder({
        tokenID: strangerMarket.tokens[0].tokenId,
        price: 0.5,
        size: 10,
        side: Side.BUY,
      });
      expect(await t.client.postOrder(builtElsewhere)).toEqual({ error: 'market not found', status: 404 });
    } finally {
      await elsewhere.stop();
    }

    // The client cached tick 0.01; the market moved to 0.1, so 0.45 is off the grid now.
    fake.setTickSize(YES, '0.1');
    try {
      const offGrid = await t.client.createOrder({ tokenID: YES, price: 0.45, size: 10, side: Side.BUY });
      const id = orderHashV2(v2(offGrid), { chainId: 137, negRisk: false }).toLowerCase();
      expect(await t.client.postOrder(offGrid)).toEqual({
        error: `order ${id} is invalid. Price (0.45) breaks minimum tick size rule: 0.1`,
        status: 400,
      });
    } finally {
      fake.setTickSize(YES, '0.01');
    }

    const posted = await t.strict.postOrder(good);
    expect(posted.status).toBe('live');
    expect(await t.client.postOrder(good)).toEqual({
      error: `order ${posted.orderID} is invalid. Duplicated.`,
      status: 400,
    });

    const soon = await t.client.createOrder({
      tokenID: YES,
      price: 0.45,
      size: 10,
      side: Side.BUY,
      expiration: nowSeconds() + 30,
    });
    expect(await t.client.postOrder(soon, OrderType.GTD)).toEqual({
      error: 'invalid expiration',
      status: 400,
    });
  });

  it('refuses an order whose owner or signer is not the API key', async () => {
    const t = await trader();
    const other = await trader();
    const order = await other.client.createOrder({ tokenID: YES, price: 0.5, size: 5, side: Side.BUY });
    expect(await t.client.postOrder(order)).toEqual({
      error: 'the order signer address has to be the address of the API KEY',
      status: 400,
    });
    const res = await fetch(`${fake.url}/order`, { method: 'POST', body: '{"order": 1}' });
    expect(res.status).toBe(401);
  });

  it('surfaces a 429 from the knob as an error in the client, with Retry-After', async () => {
    const t = await trader();
    fake.knobs.rateLimitRetryAfter = '7';
    await expect(t.strict.getOpenOrders()).rejects.toMatchObject({
      message: 'Too Many Requests',
      status: 429,
    });
    await expect(t.strict.getServerTime()).rejects.toBeInstanceOf(ApiError);
    const res = await fetch(`${fake.url}/time`);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.headers.get('poly-ratelimit-remaining')).toBe('0');
    expect(await res.json()).toEqual({ error: 'Too Many Requests' });
    fake.knobs.rateLimitRetryAfter = null;
    expect(await t.strict.getOpenOrders()).toEqual([]);
  });

  it('answers 5xx, 503 trading modes and malformed JSON from the knobs', async () => {
    const t = await trader();
    fake.knobs.serverError = 502;
    await expect(t.strict.getApiKeys()).rejects.toMatchObject({ status: 502 });
    fake.knobs.serverError = null;
    fake.knobs.trading = 'cancel-only';
    const order = await t.client.createOrder({ tokenID: YES, price: 0.5, size: 5, side: Side.BUY });
    expect(await t.client.postOrder(order)).toEqual({
      error: 'Trading is currently cancel-only. New orders are not accepted, but cancels are allowed.',
      status: 503,
    });
    expect(await t.client.cancelAll()).toEqual({ canceled: [], not_canceled: {} });
    fake.knobs.trading = 'open';
    fake.knobs.malformedJson = true;
    const res = await fetch(`${fake.url}/time`);
    expect(res.status).toBe(200);
    await expect(res.json()).rejects.toThrow();
  });
});

describe('CLOB fake: keys kept across restarts', () => {
  it('keeps the API keys in its file (mode 0600) and answers them after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clob-fake-'));
    const persistPath = join(dir, 'clob', 'api-keys.json');
    try {
      const first = await startClobFake({ markets: [MARKET], persistPath });
      const key = generatePrivateKey();
      let t: Trader;
      try {
        t = await trader({ key, url: first.url });
      } finally {
        await first.stop();
      }
      expect(statSync(persistPath).mode & 0o777).toBe(0o600);
      const second = await startClobFake({ markets: [MARKET], persistPath });
      try {
        const again = await trader({ key, url: second.url });
        expect(again.creds).toEqual(t.creds);
        expect(await again.client.getApiKeys()).toEqual({ apiKeys: [t.creds.key] });
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('CLOB fake: GTD expiry on the fake clock', () => {
  it('drops a GTD order a minute before its expiration', async () => {
    const clock = new ManualClock(new Date());
    const local = await startClobFake({ markets: [MARKET], clock, maxClockSkewSeconds: 3600 });
    try {
      const t = await trader({ url: local.url });
      const expiration = Math.floor(clock.now().getTime() / 1000) + 180;
      const signed = await t.client.createOrder({
        tokenID: YES,
        price: 0.5,
        size: 5,
        side: Side.SELL,
        expiration,
      });
      const posted = await t.strict.postOrder(signed, OrderType.GTD);
      clock.advance(100_000);
      expect(await t.client.getOrder(posted.orderID)).toMatchObject({ status: 'LIVE' });
      clock.advance(21_000); // 121 s in: within the last minute
      expect(await t.client.getOrder(posted.orderID)).toMatchObject({ status: 'EXPIRED' });
      expect(await t.client.getOpenOrders()).toEqual([]);
    } finally {
      await local.stop();
    }
  });
});

describe('CLOB fake on the devnet chain', () => {
  const devnet = inject('devnet');
  const chain = devnet.chains[137];
  const walletSource = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
/// Answers Safe's isOwner(address) for one owner.
contract OneOwnerWallet {
    address private immutable owner;
    constructor(address owner_) { owner = owner_; }
    function isOwner(address who) external view returns (bool) { return who == owner; }
}`;

  it.runIf(Boolean(chain?.polymarket))(
    "is started by the devnet for Polygon: its markets trade and its balances are the chain's pUSD",
    async () => {
      const polygon = devnetChain(devnet, 137);
      const { clobUrl, markets } = polygon.polymarket!;
      expect(markets.map((m) => [m.tickSize, m.negRisk])).toEqual([
        ['0.01', false],
        ['0.001', true],
      ]);
      const holder = await newFundedAccount(devnet, {
        chainId: 137,
        tokens: [{ symbol: 'pUSD', amount: 4_200_000n }],
      });
      const t = await trader({ key: holder.privateKey, url: clobUrl });
      expect(await t.client.getTickSize(markets[0]!.tokens[0].tokenId)).toBe('0.01');
      expect(await t.client.getNegRisk(markets[1]!.tokens[0].tokenId)).toBe(true);
      for (const market of markets) {
        const posted = await t.strict.postOrder(
          await t.client.createOrder({
            tokenID: market.tokens[0].tokenId,
            price: 0.05,
            size: 5,
            side: Side.BUY,
          }),
        );
        expect(posted).toMatchObject({ success: true, status: 'live' });
      }
      const held = await t.client.getBalanceAllowance({ asset_type: AssetType.COLLATERAL });
      expect(held.balance).toBe('4200000');
      expect(Object.keys(held.allowances)).toEqual([
        CTF_EXCHANGE_V2[137]!.exchange,
        CTF_EXCHANGE_V2[137]!.negRiskExchange,
        CTF_EXCHANGE_V2[137]!.negRiskAdapter,
      ]);
      expect((await t.client.cancelAll()).canceled).toHaveLength(2);
    },
  );

  it.runIf(Boolean(chain?.contracts.pusd))(
    'accepts a type 2 order when the Safe says isOwner, and reads pUSD balance and allowances on chain',
    async () => {
      const rpc = devnetChain(devnet, 137);
      const pusd = rpc.contracts.pusd!;
      const deployer = await newFundedAccount(devnet, { chainId: 137 });
      const viemChain = chainDefinition(137, rpc.rpcUrl);
      const publicClient = createPublicClient({
        chain: viemChain,
        transport: http(rpc.rpcUrl),
        pollingInterval: 20,
      });
      const deployerWallet = createWalletClient({
        account: privateKeyToAccount(deployer.privateKey),
        chain: viemChain,
        transport: http(rpc.rpcUrl),
      });
      const compiled = compileSources({ 'OneOwnerWallet.sol': walletSource }).contracts.OneOwnerWallet!;
      const signerKey = generatePrivateKey();
      const signer = privateKeyToAccount(signerKey).address;
      const deployTx = await deployerWallet.deployContract({
        abi: compiled.abi,
        bytecode: compiled.bytecode,
        args: [signer],
      });
      const safe = (await publicClient.waitForTransactionReceipt({ hash: deployTx })).contractAddress!;

      // The funder (the Safe) holds pUSD: mint to the deployer, send it over, approve from a
      // plain account to show allowances are read too.
      const holder = await newFundedAccount(devnet, {
        chainId: 137,
        tokens: [{ symbol: 'pUSD', amount: 25_000_000n }],
      });
      const holderWallet = createWalletClient({
        account: privateKeyToAccount(holder.privateKey),
        chain: viemChain,
        transport: http(rpc.rpcUrl),
      });
      const transfer = await holderWallet.writeContract({
        address: pusd,
        abi: erc20Abi,
        functionName: 'transfer',
        args: [safe, 10_000_000n],
      });
      await publicClient.waitForTransactionReceipt({ hash: transfer });
      const approve = await holderWallet.writeContract({
        address: pusd,
        abi: erc20Abi,
        functionName: 'approve',
        args: [CTF_EXCHANGE_V2[137]!.exchange, 3_000_000n],
      });
      await publicClient.waitForTransactionReceipt({ hash: approve });

      const onChain = await startClobFake({
        markets: [MARKET],
        chain: { rpcUrl: rpc.rpcUrl, collateral: pusd },
      });
      try {
        const viaSafe = await trader({
          key: signerKey,
          signatureType: SignatureTypeV2.POLY_GNOSIS_SAFE,
          funder: safe,
          url: onChain.url,
        });
        const posted = await viaSafe.strict.postOrder(
          await viaSafe.client.createOrder({ tokenID: YES, price: 0.5, size: 5, side: Side.BUY }),
        );
        expect(posted).toMatchObject({ success: true, status: 'live' });

        // Not an owner of that Safe: refused.
        const intruder = await trader({
          signatureType: SignatureTypeV2.POLY_GNOSIS_SAFE,
          funder: safe,
          url: onChain.url,
        });
        expect(
          await intruder.client.postOrder(
            await intruder.client.createOrder({ tokenID: YES, price: 0.5, size: 5, side: Side.BUY }),
          ),
        ).toEqual({ error: 'invalid signature', status: 400 });

        // Type 2 balances are the Safe's (registered here, since balances name a funder).
        onChain.registerFunder(safe, signer, 2);
        expect((await viaSafe.client.getBalanceAllowance({ asset_type: AssetType.COLLATERAL })).balance).toBe(
          '10000000',
        );
        const plain = await trader({ key: holder.privateKey, url: onChain.url });
        const held = await plain.client.getBalanceAllowance({ asset_type: AssetType.COLLATERAL });
        expect(held.balance).toBe('15000000');
        expect(held.allowances[onChain.exchange]).toBe('3000000');
        expect(held.allowances[onChain.negRiskExchange]).toBe('0');
      } finally {
        await onChain.stop();
      }
    },
  );
});
