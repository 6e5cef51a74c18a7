// The token registry as agents read it: real addresses in production, devnet addresses in
// development, exact UPPERCASE symbols, and GET /v1/tokens with its chain filter.

import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createViemChainPort } from '../../adapters/chain/viem.ts';
import { createVenueAdapters, settlingVenues } from '../../adapters/venues/index.ts';
import { devnetRpcUrls, devnetTokenAddresses } from '../../devnet/devnet.ts';
import { devnetConfig } from '../../devnet/config-overrides.ts';
import { buildApp, type App } from '../../app.ts';
import { testConfig, type Config } from '../../config.ts';
import { refuseAllAuthenticator } from '../../../test/support/refuse-all-authenticator.ts';
import { systemClock } from '../../core/clock.ts';
import { createLogger } from '../../core/log.ts';
import type { AppDeps } from '../../deps.ts';
import { createTestDatabase, type TestDatabase } from '../../../test/support/db.ts';
import { expectErrorBody } from '../../../test/support/error-body.ts';
import { buildTokenRegistry, type TokenRegistry } from './index.ts';

// The real deployments, from the project's protocol and execution references.
const REAL = {
  base: {
    USDC: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    WETH: '0x4200000000000000000000000000000000000006',
    EURC: '0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42',
  },
  baseSepolia: {
    USDC: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    WETH: '0x4200000000000000000000000000000000000006',
  },
  polygon: {
    USDC: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
    'USDC.E': '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174',
    PUSD: '0xC011a7E12a19f7B1f670d46F03B03f3342E82DFB',
    WPOL: '0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270',
  },
};

/** The whole production response, field by field. */
const PRODUCTION_CHAINS = [
  {
    chain_id: 8453,
    name: 'Base',
    wrapped_native: REAL.base.WETH,
    venues: [
      { name: '0x', settles: true },
      { name: 'kyberswap', settles: true },
      { name: 'aerodrome', settles: true },
      { name: 'uniswap-v3', settles: true },
    ],
    tokens: [
      { symbol: 'USDC', address: REAL.base.USDC, decimals: 6, stable: true },
      { symbol: 'WETH', address: REAL.base.WETH, decimals: 18, stable: false },
      { symbol: 'EURC', address: REAL.base.EURC, decimals: 6, stable: false },
    ],
  },
  {
    chain_id: 84532,
    name: 'Base Sepolia',
    wrapped_native: REAL.baseSepolia.WETH,
    venues: [],
    tokens: [
      { symbol: 'USDC', address: REAL.baseSepolia.USDC, decimals: 6, stable: true },
      { symbol: 'WETH', address: REAL.baseSepolia.WETH, decimals: 18, stable: false },
    ],
  },
  {
    chain_id: 137,
    name: 'Polygon',
    wrapped_native: REAL.polygon.WPOL,
    venues: [{ name: 'polymarket', settles: false }],
    tokens: [
      { symbol: 'USDC', address: REAL.polygon.USDC, decimals: 6, stable: true },
      { symbol: 'USDC.E', address: REAL.polygon['USDC.E'], decimals: 6, stable: true },
      { symbol: 'PUSD', address: REAL.polygon.PUSD, decimals: 6, stable: true },
      { symbol: 'WPOL', address: REAL.polygon.WPOL, decimals: 18, stable: false },
    ],
  },
];

// Addresses a devnet might deploy at (anvil's deterministic CREATE addresses look like these).
const DEVNET = {
  usdc: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  weth: '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512',
  pusd: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
} as const;

/** The answer of an app without venue adapters: each venue's contracts are unknown there, so empty. */
const WIRE_CHAINS = PRODUCTION_CHAINS.map((c) => ({
  ...c,
  explorer_url: null as string | null,
  venues: c.venues.map((v) => ({ ...v, contracts: [] as string[] })),
}));

describe('buildTokenRegistry', () => {
  it('lists the real addresses, venues and decimals in production', () => {
    const registry = buildTokenRegistry('production');
    const chains = registry.registryChains().map((c) => ({
      chain_id: c.chainId,
      name: c.name,
      wrapped_native: c.wrappedNative,
      venues: c.venues.map((v) => ({ ...v })),
      tokens: c.tokens.map((t) => ({ ...t })),
    }));
    expect(chains).toEqual(PRODUCTION_CHAINS);
  });

  it('spells every symbol in uppercase and marks only USD-pegged tokens stable', () => {
    for (const env of ['production', 'development'] as const) {
      for (const chain of buildTokenRegistry(env).registryChains()) {
        for (const token of chain.tokens) {
          expect(token.symbol).toBe(token.symbol.toUpperCase());
          expect(token.stable, `${chain.chainId} ${token.symbol}`).toBe(
            ['USDC', 'USDC.E', 'PUSD'].includes(token.symbol),
          );
        }
      }
    }
    expect(buildTokenRegistry('production').findToken(8453, 'EURC')?.stable).toBe(false);
  });

  it('lists a conversion venue the configuration adds (the devnet AMM) where its adapter serves, and only there', () => {
    // As the devnet's door configures it: its AMM serves Base, beside Uniswap v3 and Aerodrome.
    const dev = buildTokenRegistry('development', undefined, {
      8453: ['uniswap-v3', 'aerodrome', 'devnet-amm'],
    });
    expect(dev.chain(8453)?.venues.map((v) => v.name)).toEqual([
      '0x',
      'kyberswap',
      'aerodrome',
      'uniswap-v3',
      'devnet-amm',
    ]);
    expect(dev.chain(8453)?.venues.find((v) => v.name === 'devnet-amm')?.settles).toBe(true);
    expect(dev.chain(84532)?.venues).toEqual([]);
    expect(dev.chain(137)?.venues).toEqual([{ name: 'polymarket', settles: false }]);
    // The words a policy's execution.venues may carry follow: every conversion venue listed.
    expect(dev.conversionVenues()).toEqual(['0x', 'kyberswap', 'aerodrome', 'uniswap-v3', 'devnet-amm']);
    // Without the devnet's configuration (production, or development without the devnet), no AMM.
    for (const registry of [buildTokenRegistry('production'), buildTokenRegistry('development')]) {
      for (const chain of registry.registryChains())
        expect(chain.venues.map((v) => v.name)).not.toContain('devnet-amm');
      expect(registry.conversionVenues()).toEqual(['0x', 'kyberswap', 'aerodrome', 'uniswap-v3']);
    }
  });

  it('takes devnet addresses in development, by symbol in any case, and keeps real ones for the rest', () => {
    const registry = buildTokenRegistry('development', {
      8453: {
        usdc: DEVNET.usdc,
        WETH: DEVNET.weth,
        NOTINCATALOG: '0x000000000000000000000000000000000000dEaD',
      },
      137: { pUSD: DEVNET.pusd },
    });
    const base = registry.chain(8453);
    expect(base?.tokens.map((t) => [t.symbol, t.address])).toEqual([
      ['USDC', DEVNET.usdc],
      ['WETH', '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512'], // checksummed
      ['EURC', REAL.base.EURC],
    ]);
    expect(base?.wrappedNative).toBe('0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512');
    expect(registry.findToken(137, 'PUSD')?.address).toBe(DEVNET.pusd);
    expect(registry.findToken(137, 'USDC.E')?.address).toBe(REAL.polygon['USDC.E']);
    expect(registry.chain(84532)?.tokens.map((t) => t.address)).toEqual([
      REAL.baseSepolia.USDC,
      REAL.baseSepolia.WETH,
    ]);
    expect(registry.findToken(8453, 'NOTINCATALOG')).toBeNull();
  });

  it('refuses devnet addresses in production, invalid addresses and two symbols on one address', () => {
    expect(() => buildTokenRegistry('production', { 8453: { USDC: DEVNET.usdc } })).toThrow(
      /refused in production/,
    );
    expect(() => buildTokenRegistry('development', { 8453: { USDC: '0x1234' } })).toThrow(/not an address/);
    expect(() =>
      buildTokenRegistry('development', { 8453: { USDC: DEVNET.usdc, EURC: DEVNET.usdc } }),
    ).toThrow(/share the address/);
  });

  it('finds tokens by exact symbol or by address in any case', () => {
    const registry = buildTokenRegistry('production');
    expect(registry.findToken(137, 'USDC.E')?.address).toBe(REAL.polygon['USDC.E']);
    expect(registry.findToken(137, REAL.polygon.PUSD.toLowerCase())?.symbol).toBe('PUSD');
    expect(registry.findToken(137, REAL.polygon.PUSD.toUpperCase().replace('0X', '0x'))?.symbol).toBe('PUSD');
    // The symbol is the exact string a policy allowlist carries: no case folding.
    expect(registry.findToken(137, 'pUSD')).toBeNull();
    expect(registry.findToken(137, 'USDC.e')).toBeNull();
    // The same address on another chain is another token, or none.
    expect(registry.findToken(8453, REAL.polygon.USDC)).toBeNull();
    expect(registry.findToken(1, 'USDC')).toBeNull();
    expect(registry.chain(1)).toBeNull();
  });

  it('cannot be changed by a caller', () => {
    const registry = buildTokenRegistry('production');
    const token = registry.findToken(8453, 'USDC');
    expect(() => {
      (token as { stable: boolean }).stable = false;
    }).toThrow(TypeError);
    expect(registry.findToken(8453, 'USDC')?.stable).toBe(true);
  });
});

describe('GET /v1/tokens', () => {
  let database: TestDatabase;
  let production: App;
  let development: App;
  let limited: App;
  const devRegistry = buildTokenRegistry(
    'development',
    { 8453: { USDC: DEVNET.usdc } },
    { 8453: ['0x', 'kyberswap', 'aerodrome', 'uniswap-v3', 'devnet-amm'] },
  );

  const makeApp = (config: Partial<Config>, tokenRegistry?: TokenRegistry, more: Partial<AppDeps> = {}) => {
    const deps: AppDeps = {
      config: testConfig(config),
      db: database.handle.db,
      dbKind: database.kind,
      clock: systemClock,
      log: createLogger('silent'),
      authenticator: refuseAllAuthenticator,
      tokenRegistry: tokenRegistry ?? buildTokenRegistry(config.env ?? 'development'),
      ...more,
    };
    return buildApp(deps);
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    production = await makeApp({ env: 'production' }, buildTokenRegistry('production'));
    development = await makeApp({ env: 'development' }, devRegistry);
    limited = await makeApp({ env: 'production', publicRateLimitPerMinute: 2 });
  });
  afterAll(async () => {
    await Promise.all([production, development, limited].map((a) => a?.fastify.close()));
    await database?.drop();
  });

  it('lists every supported chain with every field, without a credential', async () => {
    const res = await production.fastify.inject({ method: 'GET', url: '/v1/tokens' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.json()).toEqual({ chains: WIRE_CHAINS });
  });

  it("publishes each chain's configured block explorer, and null where none is", async () => {
    const app = await makeApp(
      { env: 'production', explorerUrls: { 8453: 'https://basescan.org' } },
      buildTokenRegistry('production'),
    );
    try {
      const res = await app.fastify.inject({ method: 'GET', url: '/v1/tokens' });
      const chains = res.json<{ chains: { chain_id: number; explorer_url: string | null }[] }>().chains;
      expect(chains.map((c) => [c.chain_id, c.explorer_url])).toEqual(
        WIRE_CHAINS.map((c) => [c.chain_id, c.chain_id === 8453 ? 'https://basescan.org' : null]),
      );
    } finally {
      await app.fastify.close();
    }
  });

  it('filters by chain_id', async () => {
    for (const chain of WIRE_CHAINS) {
      const res = await production.fastify.inject({
        method: 'GET',
        url: `/v1/tokens?chain_id=${chain.chain_id}`,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ chains: [chain] });
    }
  });

  it.each(['abc', '1.0', '-1', '', '8453abc', '0x2105'])('refuses chain_id=%j with 400', async (value) => {
    const res = await production.fastify.inject({
      method: 'GET',
      url: `/v1/tokens?chain_id=${encodeURIComponent(value)}`,
    });
    const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
    expect(body.message).toContain('chain_id');
  });

  it('answers an unsupported chain with 400 naming the supported ones', async () => {
    const res = await production.fastify.inject({ method: 'GET', url: '/v1/tokens?chain_id=1' });
    const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
    expect(body.message).toContain('chain_id 1 is not supported');
    expect(body.message).toContain('8453 (Base), 84532 (Base Sepolia), 137 (Polygon)');
    expect(body.next).toEqual([{ method: 'GET', path: '/v1/tokens', why: 'lists every supported chain' }]);
  });

  it('refuses an unknown query parameter by name', async () => {
    const res = await production.fastify.inject({ method: 'GET', url: '/v1/tokens?chain=8453' });
    const body = expectErrorBody(res, 400, 'INVALID_REQUEST');
    expect(body.message).toContain('unknown field chain');
  });

  it('shows the devnet addresses and the devnet AMM in development', async () => {
    const res = await development.fastify.inject({ method: 'GET', url: '/v1/tokens?chain_id=8453' });
    expect(res.statusCode).toBe(200);
    const [base] = (res.json() as { chains: typeof PRODUCTION_CHAINS }).chains;
    expect(base?.tokens.find((t) => t.symbol === 'USDC')?.address).toBe(DEVNET.usdc);
    expect(base?.tokens.find((t) => t.symbol === 'EURC')?.address).toBe(REAL.base.EURC);
    expect(base?.venues.at(-1)).toEqual({ name: 'devnet-amm', settles: true, contracts: [] });
  });

  it('falls back to the real addresses when no registry was built, and is rate limited per address', async () => {
    const first = await limited.fastify.inject({ method: 'GET', url: '/v1/tokens' });
    expect(first.json()).toEqual({ chains: WIRE_CHAINS });
    await limited.fastify.inject({ method: 'GET', url: '/v1/tokens' });
    const third = await limited.fastify.inject({ method: 'GET', url: '/v1/tokens' });
    expectErrorBody(third, 429, 'RATE_LIMITED');
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('settling venues come from the venue adapters', () => {
  it('marks a conversion venue settling only where an adapter serves the chain', () => {
    const registry = buildTokenRegistry('production', undefined, {
      8453: ['uniswap-v3', 'aerodrome', 'kyberswap'],
    });
    expect(registry.chain(8453)?.venues).toEqual([
      { name: '0x', settles: false },
      { name: 'kyberswap', settles: true },
      { name: 'aerodrome', settles: true },
      { name: 'uniswap-v3', settles: true },
    ]);
    // Prediction-market venues keep the catalog's role.
    expect(registry.chain(137)?.venues).toEqual([{ name: 'polymarket', settles: false }]);
  });

  it('lists, in development, the devnet’s addresses (EURC included) and every venue the devnet runs as settling', () => {
    const devnet = inject('devnet');
    const chain = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) });
    const adapters = createVenueAdapters({ config: devnetConfig(testConfig(), devnet), chain });
    const registry = buildTokenRegistry(
      'development',
      devnetTokenAddresses(devnet),
      settlingVenues(adapters),
    );
    const base = registry.chain(8453)!;
    expect(base.venues).toEqual([
      { name: '0x', settles: true },
      { name: 'kyberswap', settles: true },
      { name: 'aerodrome', settles: true },
      { name: 'uniswap-v3', settles: true },
      { name: 'devnet-amm', settles: true },
    ]);
    expect(base.tokens.find((t) => t.symbol === 'EURC')?.address).toBe(devnet.chains[8453]!.contracts.eurc);
    expect(registry.chain(84532)?.venues).toEqual([]);
  });

  it("answers each venue's contracts, which a delegation for conversions on it allows", async () => {
    const devnet = inject('devnet');
    const chain = createViemChainPort({ rpcUrls: devnetRpcUrls(devnet) });
    const venues = createVenueAdapters({ config: devnetConfig(testConfig(), devnet), chain });
    const registry = buildTokenRegistry('development', devnetTokenAddresses(devnet), settlingVenues(venues));
    const database = await createTestDatabase();
    const app = await buildApp({
      config: testConfig(),
      db: database.handle.db,
      dbKind: database.kind,
      clock: systemClock,
      log: createLogger('silent'),
      authenticator: refuseAllAuthenticator,
      tokenRegistry: registry,
      venues,
    });
    try {
      const res = await app.fastify.inject({ method: 'GET', url: '/v1/tokens?chain_id=8453' });
      const [base] = res.json<{ chains: { venues: { name: string; contracts: string[] }[] }[] }>().chains;
      const contracts = Object.fromEntries(base!.venues.map((v) => [v.name, v.contracts]));
      const deployed = devnet.chains[8453]!.contracts;
      // The devnet's AMM is a Uniswap v2 Router02; Aerodrome's router; Uniswap v3's SwapRouter02.
      expect(contracts['devnet-amm']).toEqual([deployed.uniswapV2Router02]);
      expect(contracts['aerodrome']).toContain(deployed.aerodromeRouter);
      expect(contracts['uniswap-v3']).toContain(deployed.uniswapV3SwapRouter02);
    } finally {
      await app.fastify.close();
      await database.drop();
    }
  });
});
