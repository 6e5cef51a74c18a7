// The fee schedule's arithmetic: what an order or an intent is charged, to the micro-dollar, for
// the defaults and for a schedule an operator configured.

import { describe, expect, it } from 'vitest';
import { loadConfig, testConfig } from '../../config.ts';
import { pmOrderFeeMicro, productFeeMicro, publishedFeeSchedule } from './fees.ts';

const USD = 1_000_000n;
/** The configuration an operator's environment gives, on top of the test defaults. */
const configured = (env: Record<string, string>) =>
  loadConfig({ PURSER_ENV: 'development', DEVNET: 'false', LOG_LEVEL: 'silent', ...env });

describe('prediction-market order fees: base plus bps of the notional, rounded up', () => {
  const config = testConfig(); // 0.02 USD + 10 bps

  it.each([
    ['no notional', 0n, 20_000n],
    ['1 micro-USD (a thousandth of a micro-dollar, rounded up to 1)', 1n, 20_001n],
    ['exactly 1 micro-dollar of bps (0.001 USD)', 1_000n, 20_001n],
    ['just over it', 1_001n, 20_002n],
    ['100 USD', 100n * USD, 20_000n + 100_000n],
    ['a million USD', 1_000_000n * USD, 20_000n + 1_000n * USD],
  ])('%s', (_name, notional, fee) => {
    expect(pmOrderFeeMicro(config, notional)).toBe(fee);
  });

  it('follows a configured schedule', () => {
    const custom = configured({ FEE_PM_ORDER_BASE_USD: '0', FEE_PM_ORDER_BPS: '25' });
    expect(pmOrderFeeMicro(custom, 40n * USD)).toBe(100_000n); // 25 bps of 40 USD = 0.10 USD
    expect(pmOrderFeeMicro(custom, 3n)).toBe(1n); // never free once there is a notional
    expect(pmOrderFeeMicro(custom, 0n)).toBe(0n);
  });

  it('refuses a negative notional', () => {
    expect(() => pmOrderFeeMicro(config, -1n)).toThrow(RangeError);
  });
});

describe('flat fees', () => {
  it('charges the configured intent fee and the 1 USD feature request', () => {
    const custom = configured({ FEE_CONVERSION_INTENT_USD: '0.25' });
    expect(productFeeMicro(custom, 'conversion_intent')).toBe(250_000n);
    expect(productFeeMicro(custom, 'feedback')).toBe(USD);
    expect(productFeeMicro(testConfig(), 'conversion_intent')).toBe(50_000n);
  });

  it('publishes the same numbers it charges', () => {
    const config = testConfig();
    const published = publishedFeeSchedule(config, true);
    expect(published.fees.pm_order).toEqual({ base_usd: '0.02', bps: 10 });
    expect(published.fees.conversion_intent.per_intent_usd).toBe('0.05');
    expect(published.fees.feedback.per_request_usd).toBe('1');
  });
});
