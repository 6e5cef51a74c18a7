// Purser's V2 order building against what the venue's own client builds and signs
// (@polymarket/clob-client-v2 1.1.0), and the trading calls of createPolymarketClob against the
// loopback CLOB fake (which the real client accepts, see src/devnet/fakes/clob.test.ts).

import { ClobClient, orderToJsonV2, OrderType, Side } from '@polymarket/clob-client-v2';
import {
  createWalletClient,
  custom,
  getAddress,
  hashTypedData,
  keccak256,
  toHex,
  type Address,
  type Hex,
  type LocalAccount,
  type WalletClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startClobFake, type ClobFake, type ClobFakeMarket } from '../../devnet/fakes/clob.ts';
import {
  decimalToUnits,
  notionalMicros,
  orderAmounts,
  OrderInputError,
  orderNotionalMicros,
  orderSizeUnits,
  unitsToDecimal,
} from './order-amounts.ts';
import {
  buildOrderV2,
  CLOB_FIRST_CURSOR,
  createPolymarketClob,
  CTF_EXCHANGE_V2,
  newOrderSalt,
  orderHashV2,
  orderPayloadV2,
  orderTypedDataV2,
  signOrderV2,
  type OrderV2Input,
} from './polymarket.ts';
import {
  ClobVenueRejected,
  VenueUnavailable,
  type ClobL2Auth,
  type ClobOrderV2,
  type ClobPostOrderOptions,
  type ClobSide,
  type ClobSignatureType,
  type ClobSignedOrderV2,
  type ClobTickSize,
  type PolymarketClobPort,
} from './port.ts';

const tokenId = (label: string) => BigInt(keccak256(toHex(label))).toString();
const market = (label: string, tickSize: ClobTickSize, negRisk = false): ClobFakeMarket => ({
  conditionId: keccak256(toHex(`orders test ${label}`)),
  tokens: [
    { tokenId: tokenId(`orders test ${label} yes`), outcome: 'Yes' },
    { tokenId: tokenId(`orders test ${label} no`), outcome: 'No' },
  ],
  tickSize,
  negRisk,
  minOrderSize: 5,
});

const TICKS: ClobTickSize[] = ['0.1', '0.01', '0.005', '0.0025', '0.001', '0.0001'];
/** One market per tick size on each exchange, for the comparison with the client. */
const GRID_MARKETS = TICKS.flatMap((t) => [market(`grid ${t}`, t), market(`grid ${t} neg`, t, true)]);
const gridToken = (tick: ClobTickSize, negRisk: boolean) =>
  GRID_MARKETS.find((m) => m.tickSize === tick && (m.negRisk ?? false) === negRisk)!.tokens[0].tokenId;

const MARKET = market('main', '0.01');
const NEG_RISK_MARKET = market('neg risk', '0.001', true);
const YES = MARKET.tokens[0].tokenId;
const NO = MARKET.tokens[1].tokenId;
const CANDIDATE = NEG_RISK_MARKET.tokens[0].tokenId;

let fake: ClobFake;
let clob: PolymarketClobPort;

beforeAll(async () => {
  fake = await startClobFake({ markets: [MARKET, NEG_RISK_MARKET, ...GRID_MARKETS] });
  clob = createPolymarketClob({ baseUrl: fake.url, chainId: 137, timeoutMs: 2_000 });
});
afterAll(async () => {
  await fake.stop();
});
beforeEach(() => {
  fake.reset();
});

/** A viem wallet that signs locally and keeps the typed data it was asked to sign. */
function walletFor(key: Hex): { signer: WalletClient; signed: unknown[] } {
  const base = createWalletClient({
    account: privateKeyToAccount(key),
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
  return { signer, signed };
}

/** The error a promise rejects with. */
async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

function inputError(f: () => unknown): OrderInputError {
  try {
    f();
  } catch (err) {
    if (err instanceof OrderInputError) return err;
    throw err;
  }
  throw new Error('expected an OrderInputError');
}

// ------------------------------------------------------------------------------ the client's orders

describe('buildOrderV2 against the real client', () => {
  /** Prices per tick size: the ends of the grid and ones whose float products are noisy. */
  const PRICES: Record<ClobTickSize, string[]> = {
    '0.1': ['0.1', '0.3', '0.7', '0.9'],
    '0.01': ['0.01', '0.07', '0.29', '0.57', '0.58', '0.99'],
    '0.005': ['0.005', '0.115', '0.565', '0.995'],
    '0.0025': ['0.0025', '0.0075', '0.5025', '0.9975'],
    '0.001': ['0.001', '0.123', '0.563', '0.999'],
    '0.0001': ['0.0001', '0.4999', '0.5003', '0.9934', '0.9999'],
  };
  const SIZES = ['0.01', '1.1', '3.33', '5', '7.77', '12.34', '100.07', '1000.99', '4567.89', '99999.99'];

  it('computes the amounts, typed data, hash, signature and POST body the client does, for every tick size, signature type and exchange', async () => {
    const key = generatePrivateKey();
    const account = privateKeyToAccount(key);
    const funder = privateKeyToAccount(generatePrivateKey()).address;
    const clients = new Map<ClobSignatureType, { client: ClobClient; signed: unknown[] }>();
    for (const type of [0, 1, 2] as const) {
      const { signer, signed } = walletFor(key);
      const client = new ClobClient({
        host: fake.url,
        chain: 137,
        signer,
        signatureType: type,
        ...(type === 0 ? {} : { funderAddress: funder }),
      });
      clients.set(type, { client, signed });
    }
    const combos = new Set<string>();
    let i = 0;
    for (const tick of TICKS) {
      for (const price of PRICES[tick]) {
        for (const size of SIZES) {
          for (const side of ['BUY', 'SELL'] as const) {
            const type = ([0, 1, 2] as const)[i % 3]!;
            const negRisk = Math.floor(i / 3) % 2 === 1;
            i++;
            combos.add(`${type}/${negRisk}/${tick}`);
            const { client, signed } = clients.get(type)!;
            const token = gridToken(tick, negRisk);
            const before = signed.length;
            const theirs = (await client.createOrder(
              { tokenID: token, price: Number(price), size: Number(size), side: side as Side },
              { tickSize: tick, negRisk, version: 2 },
            )) as unknown as ClobSignedOrderV2;
            const where = `${side} ${size} @ ${price} (tick ${tick}, type ${type}, negRisk ${negRisk})`;

            const ours = buildOrderV2({
              maker: type === 0 ? account.address : funder,
              signer: account.address,
              signatureType: type,
              tokenId: token,
              side,
              price,
              size,
              tickSize: tick,
              salt: theirs.salt,
              timestamp: theirs.timestamp,
            });
            const { signature: theirSignature, ...theirOrder } = theirs;
            expect(ours, where).toEqual({ ...theirOrder, maker: getAddress(theirOrder.maker) });

            const venue = { chainId: 137, negRisk };
            const typed = orderTypedDataV2(ours, venue);
            expect(typed.domain?.verifyingContract).toBe(
              negRisk ? CTF_EXCHANGE_V2[137]!.negRiskExchange : CTF_EXCHANGE_V2[137]!.exchange,
            );
            expect(signed.length).toBe(before + 1);
            const clientTyped = signed[before] as Parameters<typeof hashTypedData>[0];
            expect(hashTypedData(typed), where).toBe(hashTypedData(clientTyped));

            const signedOurs = await signOrderV2(ours, account, venue);
            expect(signedOurs.signature, where).toBe(theirSignature);
            const options: ClobPostOrderOptions = { orderType: 'GTC' };
            expect(JSON.stringify(orderPayloadV2(signedOurs, 'the-api-key', options))).toBe(
              JSON.stringify(
                orderToJsonV2(
                  { ...theirs, maker: ours.maker } as unknown as Parameters<typeof orderToJsonV2>[0],
                  'the-api-key',
                  OrderType.GTC,
                ),
              ),
            );
            expect(orderNotionalMicros(ours)).toBe(
              BigInt(side === 'BUY' ? theirs.makerAmount : theirs.takerAmount),
            );
          }
        }
      }
    }
    // Every signature type on both exchanges was compared, on every tick size.
    expect(combos.size).toBe(3 * 2 * TICKS.length);
  }, 60_000);

  it('keeps the exact product where the client drifts in floating point (≈ 250,000 shares and up)', async () => {
    const key = generatePrivateKey();
    const { signer } = walletFor(key);
    const client = new ClobClient({ host: fake.url, chain: 137, signer });
    const token = gridToken('0.0025', false);
    const theirs = (await client.createOrder(
      { tokenID: token, price: 0.94, size: 423762.72, side: Side.SELL },
      { tickSize: '0.0025', negRisk: false, version: 2 },
    )) as unknown as ClobSignedOrderV2;
    expect(theirs.takerAmount).toBe('398336956799');
    const ours = orderAmounts({ side: 'SELL', price: '0.94', size: '423762.72', tickSize: '0.0025' });
    expect(ours.takerAmount).toBe(398336956800n);
    expect(ours.makerAmount).toBe(423762720000n);
  });

  it('defaults salt (a safe integer), timestamp (the clock, ms), expiration, metadata and builder', () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const order = buildOrderV2({
      maker: account.address,
      signer: account.address,
      signatureType: 0,
      tokenId: YES,
      side: 'BUY',
      price: '0.55',
      size: '10',
      tickSize: '0.01',
      clock: { now: () => new Date('2026-07-01T00:00:00.123Z') },
    });
    expect(order).toMatchObject({
      makerAmount: '5500000',
      takerAmount: '10000000',
      timestamp: String(Date.parse('2026-07-01T00:00:00.123Z')),
      expiration: '0',
      metadata: `0x${'0'.repeat(64)}`,
      builder: `0x${'0'.repeat(64)}`,
    });
    expect(Number.isSafeInteger(Number(order.salt))).toBe(true);
    const salts = new Set(Array.from({ length: 50 }, () => newOrderSalt()));
    expect(salts.size).toBe(50);
    for (const s of salts) expect(BigInt(s)).toBeLessThanOrEqual(BigInt(Number.MAX_SAFE_INTEGER));
  });

  it('refuses, naming the field, what the venue would refuse or the client would round', () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const other = privateKeyToAccount(generatePrivateKey()).address;
    const base: OrderV2Input = {
      maker: account.address,
      signer: account.address,
      signatureType: 0,
      tokenId: YES,
      side: 'BUY',
      price: '0.5',
      size: '10',
      tickSize: '0.01',
    };
    const cases: [Partial<OrderV2Input>, string, RegExp][] = [
      [{ price: '0' }, 'price', /outside \(0, 1\)/],
      [{ price: '1' }, 'price', /outside/],
      [{ price: '1.5' }, 'price', /outside/],
      [{ price: '0.000' }, 'price', /outside/],
      [{ price: '-0.5' }, 'price', /not a decimal/],
      [{ price: '5e-1' }, 'price', /not a decimal/],
      [{ price: '' }, 'price', /not a decimal/],
      [{ price: '0.455' }, 'price', /tick size grid of 0\.01/],
      [{ price: '0.123', tickSize: '0.005' }, 'price', /grid of 0\.005/],
      [{ price: '0.0030', tickSize: '0.0025' }, 'price', /grid/],
      [{ price: '0.50000001' }, 'price', /grid/],
      [{ size: '0' }, 'size', /more than 0/],
      [{ size: '0.001' }, 'size', /more than the 2 decimals/],
      [{ size: '1.234' }, 'size', /2 decimals/],
      [{ size: 'ten' }, 'size', /not a decimal/],
      [{ tickSize: '0.02' as ClobTickSize }, 'tickSize', /tickSize/],
      [{ maker: other }, 'maker', /maker to be the signer/],
      [{ signatureType: 1 }, 'maker', /funder/],
      [{ signatureType: 2 }, 'maker', /funder/],
      [{ signatureType: 4 as ClobSignatureType }, 'signatureType', /0, 1, 2 or 3/],
      [{ maker: '0x1234' as Address }, 'maker', /address/],
      [{ tokenId: '0x12' }, 'tokenId', /integer/],
      [{ tokenId: '0' }, 'tokenId', /outcome token/],
      [{ salt: (2n ** 53n).toString() }, 'salt', /range/],
      [{ salt: -1 }, 'salt', /non-negative/],
      [{ expiration: '1.5' }, 'expiration', /integer/],
      [{ metadata: '0x12' as Hex }, 'metadata', /32 bytes/],
      [{ builder: 'builder' as Hex }, 'builder', /32 bytes/],
      [{ side: 'HOLD' as ClobSide }, 'side', /BUY or SELL/],
    ];
    for (const [change, field, message] of cases) {
      const err = inputError(() => buildOrderV2({ ...base, ...change }));
      expect(err.field, JSON.stringify(change)).toBe(field);
      expect(err.message, JSON.stringify(change)).toMatch(message);
    }
    // On the grid with trailing zeros, and a size with trailing zeros: fine.
    expect(buildOrderV2({ ...base, price: '0.500', size: '10.50' })).toMatchObject({
      makerAmount: '5250000',
      takerAmount: '10500000',
    });
    expect(buildOrderV2({ ...base, price: '.25' }).makerAmount).toBe('2500000');
    // Types 1 and 2 with a funder, type 3 with maker = signer.
    for (const type of [1, 2] as const) {
      expect(buildOrderV2({ ...base, signatureType: type, maker: other }).maker).toBe(other);
    }
    expect(buildOrderV2({ ...base, signatureType: 3 }).signatureType).toBe(3);
  });

  it('computes notionals in micro-USD and sizes in base units', () => {
    expect(notionalMicros({ side: 'BUY', price: '0.55', size: '10', tickSize: '0.01' })).toBe(5_500_000n);
    expect(notionalMicros({ side: 'SELL', price: '0.55', size: '10', tickSize: '0.01' })).toBe(5_500_000n);
    expect(notionalMicros({ side: 'BUY', price: '0.0001', size: '0.01', tickSize: '0.0001' })).toBe(1n);
    expect(notionalMicros({ side: 'SELL', price: '0.9975', size: '12.34', tickSize: '0.0025' })).toBe(
      12_309_150n,
    );
    const sell = { side: 'SELL' as const, makerAmount: '12340000', takerAmount: '12309150' };
    expect(orderNotionalMicros(sell)).toBe(12_309_150n);
    expect(orderSizeUnits(sell)).toBe(12_340_000n);
    expect(orderSizeUnits({ side: 'BUY', makerAmount: 5_500_000n, takerAmount: 10_000_000n })).toBe(
      10_000_000n,
    );
    expect(decimalToUnits('12.50', 6)).toBe(12_500_000n);
    expect(decimalToUnits('1.0000001', 6)).toBeNull();
    expect(unitsToDecimal(5_500_000n)).toBe('5.5');
    expect(unitsToDecimal(10_000_000n)).toBe('10');
  });

  it('does not sign type 3 orders or for another signer', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const order = buildOrderV2({
      maker: account.address,
      signer: account.address,
      signatureType: 3,
      tokenId: YES,
      side: 'BUY',
      price: '0.5',
      size: '10',
      tickSize: '0.01',
    });
    await expect(signOrderV2(order, account, { chainId: 137, negRisk: false })).rejects.toThrow(/POLY_1271/);
    const stranger = privateKeyToAccount(generatePrivateKey());
    await expect(
      signOrderV2({ ...order, signatureType: 0 }, stranger, { chainId: 137, negRisk: false }),
    ).rejects.toThrow(/not the order signer/);
  });
});

// ------------------------------------------------------------------------------ trading calls

interface Trader {
  account: LocalAccount;
  auth: ClobL2Auth;
  /** The maker of its orders: itself (type 0) or its registered proxy or Safe. */
  maker: Address;
  signatureType: ClobSignatureType;
}

async function trader(
  signatureType: ClobSignatureType = 0,
  key: Hex = generatePrivateKey(),
): Promise<Trader> {
  const account = privateKeyToAccount(key);
  const creds = await clob.deriveApiCredentials(key);
  let maker = account.address;
  if (signatureType === 1 || signatureType === 2) {
    maker = privateKeyToAccount(generatePrivateKey()).address;
    fake.registerFunder(maker, account.address, signatureType);
  }
  return { account, auth: { address: account.address, creds }, maker, signatureType };
}

async function signed(
  t: Trader,
  o: {
    tokenId: string;
    side: ClobSide;
    price: string;
    size: string;
    tickSize?: ClobTickSize;
    expiration?: number;
  },
): Promise<{ order: ClobSignedOrderV2; hash: Hex }> {
  const tickSize = o.tickSize ?? (await clob.tickSize(o.tokenId));
  const negRisk = await clob.negRisk(o.tokenId);
  const order: ClobOrderV2 = buildOrderV2({
    maker: t.maker,
    signer: t.account.address,
    signatureType: t.signatureType,
    tokenId: o.tokenId,
    side: o.side,
    price: o.price,
    size: o.size,
    tickSize,
    ...(o.expiration === undefined ? {} : { expiration: o.expiration }),
  });
  const venue = { chainId: 137, negRisk };
  return { order: await signOrderV2(order, t.account, venue), hash: orderHashV2(order, venue) };
}

async function place(
  t: Trader,
  o: { tokenId: string; side: ClobSide; price: string; size: string; expiration?: number },
  options: ClobPostOrderOptions = { orderType: 'GTC' },
) {
  const { order, hash } = await signed(t, o);
  const result = await clob.postOrder(t.auth, order, options);
  expect(result.orderId).toBe(hash.toLowerCase());
  return result;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('createPolymarketClob: placing and reading orders', () => {
  it('places BUY and SELL GTC orders (type 0) and reads them back one by one and as open orders', async () => {
    const t = await trader();
    const buy = await place(t, { tokenId: YES, side: 'BUY', price: '0.55', size: '10' });
    expect(buy).toEqual({
      orderId: buy.orderId,
      status: 'live',
      success: true,
      errorMsg: '',
      makingAmount: '',
      takingAmount: '',
      transactionHashes: [],
      tradeIds: [],
    });
    const sell = await place(t, { tokenId: NO, side: 'SELL', price: '0.7', size: '12.5' });
    expect(await clob.getOrder(t.auth, buy.orderId)).toMatchObject({
      id: buy.orderId,
      status: 'LIVE',
      owner: t.auth.creds.apiKey,
      maker_address: t.account.address,
      market: MARKET.conditionId,
      asset_id: YES,
      side: 'BUY',
      original_size: '10',
      size_matched: '0',
      price: '0.55',
      order_type: 'GTC',
      expiration: '0',
    });
    expect(await clob.getOrder(t.auth, sell.orderId)).toMatchObject({ side: 'SELL', price: '0.7' });
    const open = await clob.openOrders(t.auth);
    expect(open.map((o) => o.id).sort()).toEqual([buy.orderId, sell.orderId].sort());
    // An id the venue does not know, and another trader's order, read as null.
    expect(await clob.getOrder(t.auth, keccak256(toHex('no such order')))).toBeNull();
    const other = await trader();
    expect(await clob.getOrder(other.auth, buy.orderId)).toBeNull();
    await expect(clob.getOrder(t.auth, '0x12/../order')).rejects.toThrow(/64 hexadecimal digits/);
  });

  it('places GTD orders with their expiration', async () => {
    const t = await trader();
    const expiration = nowSeconds() + 3600;
    const gtd = await place(
      t,
      { tokenId: YES, side: 'BUY', price: '0.4', size: '5', expiration },
      { orderType: 'GTD' },
    );
    expect(await clob.getOrder(t.auth, gtd.orderId)).toMatchObject({
      order_type: 'GTD',
      expiration: String(expiration),
    });
  });

  it('places proxy (type 1) and Safe (type 2) orders for a registered funder, on both exchanges', async () => {
    const key = generatePrivateKey();
    for (const type of [1, 2] as const) {
      const t = await trader(type, key);
      const regular = await place(t, { tokenId: YES, side: 'BUY', price: '0.3', size: '20' });
      const negRisk = await place(t, { tokenId: CANDIDATE, side: 'SELL', price: '0.815', size: '6' });
      for (const id of [regular.orderId, negRisk.orderId]) {
        expect(await clob.getOrder(t.auth, id)).toMatchObject({
          maker_address: t.maker,
          owner: t.auth.creds.apiKey,
          status: 'LIVE',
        });
      }
      await clob.cancelAll(t.auth);
    }
    // An unregistered funder is refused with the venue's text.
    const t = await trader();
    const stranger = {
      ...t,
      maker: privateKeyToAccount(generatePrivateKey()).address,
      signatureType: 2 as const,
    };
    const { order } = await signed(stranger, { tokenId: YES, side: 'BUY', price: '0.3', size: '5' });
    const err = await rejection(clob.postOrder(t.auth, order, { orderType: 'GTC' }));
    expect(err).toBeInstanceOf(ClobVenueRejected);
    expect((err as ClobVenueRejected).venueError).toBe('invalid signature');
  });

  it('walks every page of open orders, filtered by market or token', async () => {
    const t = await trader();
    const inYes: string[] = [];
    for (const price of ['0.21', '0.22', '0.23', '0.24', '0.25'])
      inYes.push((await place(t, { tokenId: YES, side: 'BUY', price, size: '5' })).orderId);
    const inNegRisk = await place(t, { tokenId: CANDIDATE, side: 'BUY', price: '0.5', size: '5' });
    fake.knobs.pageSize = 2;
    const seen = fake.requests.length;
    expect((await clob.openOrders(t.auth, { market: MARKET.conditionId })).map((o) => o.id)).toEqual(inYes);
    const cursors = fake.requests
      .slice(seen)
      .filter((r) => r.path === '/data/orders')
      .map((r) => r.query.next_cursor);
    expect(cursors).toEqual([CLOB_FIRST_CURSOR, 'Mg==', 'NA==']);
    expect((await clob.openOrders(t.auth, { assetId: CANDIDATE })).map((o) => o.id)).toEqual([
      inNegRisk.orderId,
    ]);
    expect(await clob.openOrders(t.auth)).toHaveLength(6);
  });

  it('reports a match at once (trade ids, hashes, amounts) and pages fills newest first', async () => {
    const maker = await trader();
    const taker = await trader();
    await place(maker, { tokenId: YES, side: 'SELL', price: '0.6', size: '20' });
    const matched = await place(taker, { tokenId: YES, side: 'BUY', price: '0.65', size: '8' });
    expect(matched).toMatchObject({ status: 'matched', makingAmount: '4.8', takingAmount: '8' });
    expect(matched.tradeIds).toHaveLength(1);
    expect(matched.transactionHashes).toHaveLength(1);

    const resting = await place(maker, { tokenId: NO, side: 'BUY', price: '0.3', size: '50' });
    const fills = [];
    for (let i = 0; i < 3; i++) fills.push(fake.fill(resting.orderId as Hex, 5));
    fake.knobs.pageSize = 2;
    const first = await clob.trades(maker.auth, { market: MARKET.conditionId });
    // Newest first: the last fill, the one before, then (next page) the first fill and the match.
    expect(first.trades.map((tr) => tr.id)).toEqual([fills[2]!.id, fills[1]!.id]);
    expect(first.trades[0]).toMatchObject({
      taker_order_id: expect.any(String),
      side: 'SELL',
      size: '5',
      price: '0.3',
      status: 'CONFIRMED',
      trader_side: 'MAKER',
      asset_id: NO,
    });
    expect(first.trades[0]!.maker_orders[0]).toMatchObject({
      order_id: resting.orderId,
      matched_amount: '5',
    });
    expect(first.nextCursor).toBe('Mg==');
    const second = await clob.trades(maker.auth, { market: MARKET.conditionId, cursor: first.nextCursor! });
    expect(second.trades.map((tr) => tr.id)).toEqual([fills[0]!.id, matched.tradeIds[0]]);
    expect(second.nextCursor).toBeNull();

    expect((await clob.trades(maker.auth, { assetId: NO })).trades).toHaveLength(2);
    expect((await clob.trades(maker.auth, { after: nowSeconds() + 100 })).trades).toEqual([]);
    expect((await clob.trades(taker.auth, { id: matched.tradeIds[0]! })).trades).toEqual([
      expect.objectContaining({ trader_side: 'TAKER', side: 'BUY', size: '8', price: '0.6' }),
    ]);
    expect(await clob.getOrder(maker.auth, resting.orderId)).toMatchObject({ size_matched: '15' });
  });

  it('cancels one, several, by market and all', async () => {
    const t = await trader();
    const ids: string[] = [];
    for (const [tokenId, price] of [
      [YES, '0.1'],
      [YES, '0.11'],
      [NO, '0.12'],
      [NO, '0.13'],
      [CANDIDATE, '0.101'],
      [CANDIDATE, '0.102'],
    ] as const) {
      ids.push((await place(t, { tokenId, side: 'BUY', price, size: '5' })).orderId);
    }
    expect(await clob.cancelOrder(t.auth, ids[0]!)).toEqual({ canceled: [ids[0]], notCanceled: {} });
    expect(await clob.cancelOrder(t.auth, ids[0]!)).toEqual({
      canceled: [],
      notCanceled: { [ids[0]!]: 'Order not found or already canceled' },
    });
    expect(await clob.getOrder(t.auth, ids[0]!)).toMatchObject({ status: 'CANCELED' });
    expect(await clob.cancelOrders(t.auth, [ids[1]!])).toEqual({ canceled: [ids[1]], notCanceled: {} });
    expect(await clob.cancelOrders(t.auth, [])).toEqual({ canceled: [], notCanceled: {} });
    const byMarket = await clob.cancelMarket(t.auth, { market: NEG_RISK_MARKET.conditionId });
    expect(byMarket.canceled.sort()).toEqual([ids[4], ids[5]].sort());
    await expect(clob.cancelMarket(t.auth, {})).rejects.toThrow(/name a market/);
    const other = await trader();
    await place(other, { tokenId: YES, side: 'BUY', price: '0.14', size: '5' });
    const all = await clob.cancelAll(t.auth);
    expect(all.canceled.sort()).toEqual([ids[2], ids[3]].sort());
    expect(await clob.openOrders(t.auth)).toEqual([]);
    expect(await clob.openOrders(other.auth)).toHaveLength(1);
  });

  it('reads balances and allowances for the funder the signature type names', async () => {
    const t = await trader(2);
    fake.setBalance(t.maker, 'COLLATERAL', 12_345_678n);
    fake.setBalance(t.maker, { tokenId: YES }, 5_000_000n, { [fake.exchange]: 5_000_000n });
    const collateral = await clob.balanceAllowance(t.auth, { assetType: 'COLLATERAL', signatureType: 2 });
    expect(collateral.balance).toBe(12_345_678n);
    expect(Object.keys(collateral.allowances).sort()).toEqual([...fake.spenders].sort());
    expect(collateral.allowances[fake.exchange]).toBe(2n ** 256n - 1n);
    const tokens = await clob.balanceAllowance(t.auth, {
      assetType: 'CONDITIONAL',
      tokenId: YES,
      signatureType: 2,
    });
    expect(tokens).toEqual({
      balance: 5_000_000n,
      allowances: Object.fromEntries(fake.spenders.map((s) => [s, s === fake.exchange ? 5_000_000n : 0n])),
    });
    // The signer's own address (type 0) holds nothing here.
    expect((await clob.balanceAllowance(t.auth, { assetType: 'COLLATERAL', signatureType: 0 })).balance).toBe(
      0n,
    );
    await expect(
      clob.updateBalanceAllowance(t.auth, { assetType: 'COLLATERAL', signatureType: 2 }),
    ).resolves.toBeUndefined();
    await expect(
      clob.balanceAllowance(t.auth, { assetType: 'CONDITIONAL', signatureType: 2 }),
    ).rejects.toThrow(OrderInputError);
  });

  it('reads the tick size, neg-risk flag and server time', async () => {
    expect(await clob.tickSize(YES)).toBe('0.01');
    expect(await clob.tickSize(CANDIDATE)).toBe('0.001');
    expect(await clob.tickSize(gridToken('0.0001', false))).toBe('0.0001');
    expect(await clob.tickSize(gridToken('0.0025', true))).toBe('0.0025');
    expect(await clob.negRisk(YES)).toBe(false);
    expect(await clob.negRisk(CANDIDATE)).toBe(true);
    expect(Math.abs((await clob.serverTime()) - nowSeconds())).toBeLessThanOrEqual(2);
    const err = await rejection(clob.tickSize(tokenId('a token nobody lists')));
    expect(err).toBeInstanceOf(ClobVenueRejected);
    expect(err).toMatchObject({ status: 404, venueError: 'market not found' });
  });
});

describe('createPolymarketClob: refusals and failures', () => {
  it("refuses an off-tick price and a size under the minimum with the venue's text", async () => {
    const t = await trader();
    // Built for a finer grid than the market has: the venue refuses it.
    const offTick = await signed(t, {
      tokenId: YES,
      side: 'BUY',
      price: '0.455',
      size: '10',
      tickSize: '0.001',
    });
    let err = await rejection(clob.postOrder(t.auth, offTick.order, { orderType: 'GTC' }));
    expect(err).toBeInstanceOf(ClobVenueRejected);
    const id = offTick.hash.toLowerCase();
    expect(err).toMatchObject({
      status: 400,
      venueError: `order ${id} is invalid. Price (0.455) breaks minimum tick size rule: 0.01`,
    });
    expect(err.message).toContain('breaks minimum tick size rule');

    const small = await signed(t, { tokenId: YES, side: 'BUY', price: '0.5', size: '1' });
    err = await rejection(clob.postOrder(t.auth, small.order, { orderType: 'GTC' }));
    expect(err).toMatchObject({
      status: 400,
      venueError: `order ${small.hash.toLowerCase()} is invalid. Size (1) lower than the minimum: 5`,
    });

    // Post-only across the book, FOK with nothing to fill.
    await place(t, { tokenId: NO, side: 'SELL', price: '0.6', size: '5' });
    const crossing = await signed(t, { tokenId: NO, side: 'BUY', price: '0.65', size: '5' });
    err = await rejection(clob.postOrder(t.auth, crossing.order, { orderType: 'GTC', postOnly: true }));
    expect((err as ClobVenueRejected).venueError).toBe('invalid post-only order: order crosses book');
    const fok = await signed(t, { tokenId: YES, side: 'BUY', price: '0.5', size: '5' });
    err = await rejection(clob.postOrder(t.auth, fok.order, { orderType: 'FOK' }));
    expect((err as ClobVenueRejected).venueError).toMatch(/FOK orders are fully filled or killed/);
    await expect(clob.postOrder(t.auth, fok.order, { orderType: 'FOK', postOnly: true })).rejects.toThrow(
      /postOnly/,
    );
  });

  it('reads a success:false order answer as a refusal', async () => {
    const t = await trader();
    const { order } = await signed(t, { tokenId: YES, side: 'BUY', price: '0.5', size: '5' });
    const odd = createPolymarketClob({
      baseUrl: fake.url,
      chainId: 137,
      timeoutMs: 2_000,
      fetch: async () =>
        new Response(
          JSON.stringify({
            success: false,
            errorMsg: 'not enough balance / allowance',
            orderID: '',
            status: '',
          }),
          { status: 200 },
        ),
    });
    const err = await rejection(odd.postOrder(t.auth, order, { orderType: 'GTC' }));
    expect(err).toBeInstanceOf(ClobVenueRejected);
    expect(err).toMatchObject({ venueError: 'not enough balance / allowance', status: 200 });
  });

  it('is a clear refusal for a wrong L2 secret or passphrase, naming neither', async () => {
    const t = await trader();
    const { order } = await signed(t, { tokenId: YES, side: 'BUY', price: '0.5', size: '5' });
    const wrongSecret: ClobL2Auth = {
      ...t.auth,
      creds: { ...t.auth.creds, secret: Buffer.alloc(32, 7).toString('base64url') },
    };
    const wrongPassphrase: ClobL2Auth = { ...t.auth, creds: { ...t.auth.creds, passphrase: 'c'.repeat(64) } };
    for (const auth of [wrongSecret, wrongPassphrase]) {
      for (const attempt of [
        () => clob.postOrder(auth, order, { orderType: 'GTC' }),
        () => clob.openOrders(auth),
        () => clob.cancelAll(auth),
      ]) {
        const err = await rejection(attempt());
        expect(err).toBeInstanceOf(ClobVenueRejected);
        expect(err).toMatchObject({ status: 401, venueError: 'Unauthorized/Invalid api key' });
        expect(err.message).toContain('refused the API credential');
        for (const secret of [auth.creds.secret, auth.creds.passphrase, t.auth.creds.secret])
          expect(err.message).not.toContain(secret);
      }
    }
    expect(await clob.openOrders(t.auth)).toEqual([]);
  });

  it('is a VenueUnavailable on a 429 (with retryAfterMs), a 5xx, a malformed answer, a timeout and an abort', async () => {
    const t = await trader();
    const { order } = await signed(t, { tokenId: YES, side: 'BUY', price: '0.5', size: '5' });

    fake.knobs.rateLimitRetryAfter = '7';
    for (const attempt of [
      () => clob.postOrder(t.auth, order, { orderType: 'GTC' }),
      () => clob.openOrders(t.auth),
      () => clob.tickSize(YES),
    ]) {
      const err = await rejection(attempt());
      expect(err).toBeInstanceOf(VenueUnavailable);
      expect((err as VenueUnavailable).retryAfterMs).toBe(7_000);
    }
    fake.reset();

    fake.knobs.serverError = 502;
    let err = await rejection(clob.postOrder(t.auth, order, { orderType: 'GTC' }));
    expect(err).toBeInstanceOf(VenueUnavailable);
    expect(err.message).toContain('HTTP 502');
    expect(err.message).toContain('may have been placed');
    expect(await rejection(clob.trades(t.auth))).toBeInstanceOf(VenueUnavailable);
    fake.reset();

    fake.knobs.malformedJson = true;
    err = await rejection(clob.postOrder(t.auth, order, { orderType: 'GTC' }));
    expect(err).toBeInstanceOf(VenueUnavailable);
    expect(err.message).toContain('not JSON');
    fake.reset();

    fake.knobs.hang = true;
    err = await rejection(clob.postOrder(t.auth, order, { orderType: 'GTC' }, { timeoutMs: 150 }));
    expect(err).toBeInstanceOf(VenueUnavailable);
    expect(err.message).toMatch(/timed out; the order may have been placed/);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    err = await rejection(clob.openOrders(t.auth, {}, { signal: controller.signal }));
    expect(err).toBeInstanceOf(VenueUnavailable);
    expect(err.message).toContain('stopped by the caller');
    err = await rejection(clob.serverTime({ signal: AbortSignal.abort() }));
    expect(err.message).toContain('before asking');
    fake.reset();

    // The order was never placed: reading it back says so.
    expect(await clob.getOrder(t.auth, orderHashV2(order, { chainId: 137, negRisk: false }))).toBeNull();

    const odd = createPolymarketClob({
      baseUrl: fake.url,
      chainId: 137,
      timeoutMs: 2_000,
      fetch: async () => new Response(JSON.stringify({ data: 'nope' }), { status: 200 }),
    });
    for (const attempt of [
      () => odd.openOrders(t.auth),
      () => odd.trades(t.auth),
      () => odd.cancelAll(t.auth),
      () => odd.serverTime(),
    ]) {
      err = await rejection(attempt());
      expect(err).toBeInstanceOf(VenueUnavailable);
      expect(err.message).toContain("not in the venue's format");
    }
  });
});
