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
