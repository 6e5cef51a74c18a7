// Purser's V2 order building against what the venue's own client builds and signs
// (@polymarket/clob-client-v2 1.1.0), the client pointed at the loopback CLOB fake for its market
// data (see src/devnet/fakes/clob.test.ts).

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
  CTF_EXCHANGE_V2,
  newOrderSalt,
  orderPayloadV2,
  orderTypedDataV2,
  signOrderV2,
  type OrderV2Input,
} from './polymarket.ts';
import {
  type ClobPostOrderOptions,
  type ClobSide,
  type ClobSignatureType,
  type ClobSignedOrderV2,
  type ClobTickSize,
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
const YES = MARKET.tokens[0].tokenId;

let fake: ClobFake;

beforeAll(async () => {
  fake = await startClobFake({ markets: [MARKET, ...GRID_MARKETS] });
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
