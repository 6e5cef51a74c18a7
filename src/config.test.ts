import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

describe('config', () => {
  it('defaults to development on the embedded database and devnet', () => {
    const config = loadConfig({});
    expect(config.env).toBe('development');
    expect(config.databaseUrl).toBeNull();
    expect(config.devnet.enabled).toBe(true);
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(8080);
    expect(config.publicUrl).toBe('http://127.0.0.1:8080');
  });

  it("keeps the chain watcher at each chain's confirmation depth: 0 on the devnet, Base 12 and Polygon 32 off it", () => {
    expect(loadConfig({}).chainWatch).toMatchObject({
      enabled: true,
      confirmations: { 8453: 0, 84532: 0, 137: 0 },
      graceMs: 3_000,
    });
    const off = loadConfig({ DEVNET: 'false', CHAIN_WATCH_CONFIRMATIONS: '137:64' }).chainWatch;
    expect(off.confirmations).toEqual({ 8453: 12, 84532: 12, 137: 64 });
    expect(off.graceMs).toBe(10_000);
    expect(() => loadConfig({ CHAIN_WATCH_CONFIRMATIONS: '1:5,8453:x' })).toThrow(
      /CHAIN_WATCH_CONFIRMATIONS must be <chain id>:<blocks> pairs.*got "1:5"[\s\S]*got "8453:x"/,
    );
  });

  it('refuses to start production without its settings, naming every missing one in one message', () => {
    let error: unknown;
    try {
      loadConfig({ PURSER_ENV: 'production' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of [
      'DATABASE_URL',
      'PURSER_PUBLIC_URL',
      'PURSER_SEALING_KEY',
      'PURSER_OPERATOR_TOKEN',
      'RPC_URL_8453',
      'RPC_URL_84532',
      'RPC_URL_137',
    ]) {
      expect(message).toContain(name);
    }
  });

  it('starts production when everything is set, with the devnet off', () => {
    const config = loadConfig({
      PURSER_ENV: 'production',
      DATABASE_URL: 'postgres://db/purser',
      PURSER_PUBLIC_URL: 'https://purser.example/',
      PURSER_SEALING_KEY: 'ab'.repeat(32),
      PURSER_OPERATOR_TOKEN: 'op-token',
      RPC_URL_8453: 'https://base.example',
      RPC_URL_84532: 'https://sepolia.example',
      RPC_URL_137: 'https://polygon.example',
    });
    expect(config.env).toBe('production');
    expect(config.devnet.enabled).toBe(false);
    expect(config.publicUrl).toBe('https://purser.example');
  });

  it('reports every malformed value at once', () => {
    expect(() => loadConfig({ PORT: 'eighty', PURSER_ENV: 'staging', PURSER_SEALING_KEY: 'short' })).toThrow(
      /PURSER_ENV[\s\S]*PORT[\s\S]*PURSER_SEALING_KEY/,
    );
  });
});

describe('TRUST_PROXY', () => {
  it('is off by default and accepts true, a hop count or a list of networks', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy).toEqual(['10.0.0.0/8', '::1']);
    expect(() => loadConfig({ TRUST_PROXY: 'everyone' })).toThrow(/TRUST_PROXY/);
  });
});

describe('PRICE_FEEDS', () => {
  it('defaults to Chainlink on Base and lets the operator add, replace and remove feeds', () => {
    const defaults = loadConfig({}).prices;
    expect(defaults.feeds[8453]?.['ETH/USD']).toEqual({
      address: '0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70',
      heartbeatSeconds: 1200,
      decimals: 8,
    });
    expect(defaults.feeds[8453]?.['EURC/USD']?.heartbeatSeconds).toBe(86400);
    expect(defaults.marginSeconds).toBe(60);

    const changed = loadConfig({
      PRICE_FEEDS: JSON.stringify({
        8453: {
          'ETH/USD': { address: '0x00000000000000000000000000000000000000e1', heartbeat_seconds: 600 },
          'LINK/USD': null,
        },
        137: {
          'POL/USD': {
            address: '0x00000000000000000000000000000000000000e2',
            heartbeat_seconds: 60,
            decimals: 8,
          },
        },
      }),
    }).prices.feeds;
    expect(changed[8453]?.['ETH/USD']).toEqual({
      address: '0x00000000000000000000000000000000000000e1',
      heartbeatSeconds: 600,
    });
    expect(changed[8453]?.['LINK/USD']).toBeUndefined();
    expect(changed[8453]?.['USDC/USD']).toBeDefined();
    expect(changed[137]?.['POL/USD']?.heartbeatSeconds).toBe(60);
  });

  it('refuses malformed feeds, naming the problem', () => {
    expect(() => loadConfig({ PRICE_FEEDS: '{"1": {}}' })).toThrow(/PRICE_FEEDS[\s\S]*supported chain/);
    expect(() =>
      loadConfig({ PRICE_FEEDS: '{"8453": {"ETH/USD": {"address": "0x1", "heartbeat_seconds": 60}}}' }),
    ).toThrow(/ETH\/USD.address/);
    expect(() =>
      loadConfig({
        PRICE_FEEDS: '{"8453": {"ETH/USD": {"address": "0x00000000000000000000000000000000000000e1"}}}',
      }),
    ).toThrow(/heartbeat_seconds/);
    expect(() => loadConfig({ PRICE_FEEDS: 'nope' })).toThrow(/PRICE_FEEDS/);
  });
});

describe('aggregator venues', () => {
  it('defaults to the vendors’ production APIs, with no 0x key and no Kyber client id', () => {
    const { venues } = loadConfig({});
    expect(venues.zeroEx).toEqual({
      baseUrl: 'https://api.0x.org',
      apiKey: null,
      timeoutMs: 4000,
      quoteTtlMs: 30_000,
    });
    expect(venues.kyberswap).toEqual({
      baseUrl: 'https://aggregator-api.kyberswap.com',
      clientId: null,
      timeoutMs: 4000,
      quoteTtlMs: 10_000,
    });
  });

  it('takes base URLs, the key, the client id, timeouts and TTLs from the environment', () => {
    const { venues } = loadConfig({
      ZEROX_API_KEY: 'zx-key',
      ZEROX_BASE_URL: 'http://127.0.0.1:9000/',
      ZEROX_TIMEOUT_MS: '1500',
      ZEROX_QUOTE_TTL_SECONDS: '20',
      KYBERSWAP_BASE_URL: 'http://127.0.0.1:9001',
      KYBERSWAP_CLIENT_ID: 'purser',
      KYBERSWAP_TIMEOUT_MS: '2500',
      KYBERSWAP_QUOTE_TTL_SECONDS: '5',
    });
    expect(venues.zeroEx).toEqual({
      baseUrl: 'http://127.0.0.1:9000',
      apiKey: 'zx-key',
      timeoutMs: 1500,
      quoteTtlMs: 20_000,
    });
    expect(venues.kyberswap).toEqual({
      baseUrl: 'http://127.0.0.1:9001',
      clientId: 'purser',
      timeoutMs: 2500,
      quoteTtlMs: 5_000,
    });
  });

  it('refuses a base URL that is not http(s) and a timeout out of range, without echoing the key', () => {
    let message = '';
    try {
      loadConfig({ ZEROX_API_KEY: 'secret-zx-key', ZEROX_BASE_URL: 'ftp://x', KYBERSWAP_TIMEOUT_MS: '0' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/ZEROX_BASE_URL[\s\S]*KYBERSWAP_TIMEOUT_MS/);
    expect(message).not.toContain('secret-zx-key');
  });
});

describe('PURSER_EXECUTOR_PRIVATE_KEY', () => {
  // Anvil's default accounts #1 and #2 (public keys of the "test … junk" mnemonic).
  const key1 = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
  const address1 = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
  const key2 = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a';

  it('in development defaults to the devnet executor’s key, the key of the default executor address', () => {
    const config = loadConfig({});
    expect(config.executorAddress).toBe(address1);
    expect(config.executorPrivateKey).toBe(key1);
  });

  it('takes a key whose address is PURSER_EXECUTOR_ADDRESS, and none in production without one', () => {
    expect(loadConfig({ PURSER_EXECUTOR_PRIVATE_KEY: key1 }).executorPrivateKey).toBe(key1);
    // Another executor address in development: no devnet key for it.
    expect(
      loadConfig({ PURSER_EXECUTOR_ADDRESS: '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc' })
        .executorPrivateKey,
    ).toBeNull();
  });

  it('refuses to start with a key of another address, naming both addresses and never the key', () => {
    let message = '';
    try {
      loadConfig({ PURSER_EXECUTOR_PRIVATE_KEY: key2, PURSER_EXECUTOR_ADDRESS: address1 });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toContain(
      'PURSER_EXECUTOR_PRIVATE_KEY is the key of 0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc',
    );
    expect(message).toContain(address1);
    expect(message).not.toContain(key2.slice(2));
    expect(() => loadConfig({ PURSER_EXECUTOR_PRIVATE_KEY: 'nope' })).toThrow(
      /PURSER_EXECUTOR_PRIVATE_KEY must be a private key/,
    );
  });
});

describe('EXPLORER_URL_<chainId>', () => {
  it('names an explorer per supported chain without its trailing slash, refuses a non-URL, has none by default', () => {
    expect(loadConfig({}).explorerUrls).toEqual({});
    expect(
      loadConfig({ EXPLORER_URL_8453: 'https://basescan.org/', EXPLORER_URL_1: 'https://x.example' })
        .explorerUrls,
    ).toEqual({
      8453: 'https://basescan.org',
    });
    expect(() => loadConfig({ EXPLORER_URL_137: 'polygonscan.com' })).toThrow(
      /EXPLORER_URL_137 must be an http\(s\) URL/,
    );
  });
});

describe('BUNDLER_URL_<chainId>', () => {
  it('names a bundler per supported chain, refuses what is not an http(s) URL, and has none by default', () => {
    expect(loadConfig({}).bundlerUrls).toEqual({});
    const config = loadConfig({
      BUNDLER_URL_8453: 'https://api.pimlico.io/v2/8453/rpc?apikey=k',
      BUNDLER_URL_84532: 'http://127.0.0.1:4337',
      BUNDLER_URL_1: 'https://ignored.example',
    });
    expect(config.bundlerUrls).toEqual({
      8453: 'https://api.pimlico.io/v2/8453/rpc?apikey=k',
      84532: 'http://127.0.0.1:4337',
    });
    expect(config.bundlerTimeoutMs).toBe(10_000);
    expect(() =>
      loadConfig({ BUNDLER_URL_137: 'ws://polygon.example', BUNDLER_URL_8453: 'pimlico' }),
    ).toThrow(/BUNDLER_URL_8453 must be an http\(s\) URL[\s\S]*BUNDLER_URL_137 must be an http\(s\) URL/);
    expect(() => loadConfig({ BUNDLER_TIMEOUT_MS: '5' })).toThrow(/BUNDLER_TIMEOUT_MS/);
  });
});
