// The rules of key making without a database: what a calling key may make, rotate or revoke,
// IP rule containment, and the request checks the schema cannot express.

import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors/app-error.ts';
import { ipRulesWithin, normalizeIpRule } from './ip-rules.ts';
import {
  assertPinWithinCaller,
  assertWithinCaller,
  inheritIpPin,
  parseCreateRequest,
  parseEnrollRequest,
  type CallerGrant,
  type KeyGrant,
} from './service.ts';

const W1 = '0x1111111111111111111111111111111111111111';
const W2 = '0x2222222222222222222222222222222222222222';
const W3 = '0x3333333333333333333333333333333333333333';

function refusal(fn: () => unknown): AppError | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

const key = (grant: Partial<KeyGrant>): CallerGrant => ({
  kind: 'key',
  id: 'key_caller',
  scopes: grant.scopes ?? ['admin'],
  wallets: grant.wallets ?? null,
  allowedIps: grant.allowedIps ?? null,
});
const grant = (g: Partial<KeyGrant>): KeyGrant => ({
  scopes: g.scopes ?? ['read'],
  wallets: g.wallets ?? null,
  allowedIps: g.allowedIps ?? null,
});

describe('assertWithinCaller', () => {
  it('leaves a session unrestricted', () => {
    const everything = grant({ scopes: ['admin', 'write', 'read', 'supervisor'] });
    expect(refusal(() => assertWithinCaller({ kind: 'session' }, everything, 'The new key'))).toBeNull();
  });

  it('refuses scopes beyond the caller’s effective scopes with 403 naming them', () => {
    const writer = key({ scopes: ['write'] });
    expect(refusal(() => assertWithinCaller(writer, grant({ scopes: ['read', 'write'] }), 'k'))).toBeNull();
    const err = refusal(() =>
      assertWithinCaller(writer, grant({ scopes: ['read', 'supervisor', 'admin'] }), 'k'),
    );
    expect(err?.status).toBe(403);
    expect(err?.code).toBe('FORBIDDEN');
    expect(err?.message).toContain('supervisor, admin');
    const supervisor = key({ scopes: ['supervisor'] });
    expect(refusal(() => assertWithinCaller(supervisor, grant({ scopes: ['read'] }), 'k'))).toBeNull();
    expect(refusal(() => assertWithinCaller(supervisor, grant({ scopes: ['write'] }), 'k'))?.status).toBe(
      403,
    );
    expect(
      refusal(() => assertWithinCaller(key({ scopes: ['admin'] }), grant({ scopes: ['supervisor'] }), 'k')),
    ).toBeNull();
  });

  it('lets a wallet-pinned caller make only keys pinned within its wallets', () => {
    const pinned = key({ scopes: ['write'], wallets: [W1, W2] });
    expect(refusal(() => assertWithinCaller(pinned, grant({ wallets: [W2] }), 'k'))).toBeNull();
    expect(refusal(() => assertWithinCaller(pinned, grant({ wallets: [W1, W2] }), 'k'))).toBeNull();
    const unpinned = refusal(() => assertWithinCaller(pinned, grant({ wallets: null }), 'k'));
    expect(unpinned?.status).toBe(403);
    expect(unpinned?.message).toContain('account-wide');
    const outside = refusal(() => assertWithinCaller(pinned, grant({ wallets: [W1, W3] }), 'k'));
    expect(outside?.status).toBe(403);
    expect(outside?.message).toContain(W3);
  });

  it('lets an IP-pinned caller make only keys within its IP pin', () => {
    const pinned = key({ allowedIps: ['10.0.0.0/8', '2001:db8::/32'] });
    expect(
      refusal(() => assertWithinCaller(pinned, grant({ allowedIps: ['10.1.0.0/16', '2001:db8:1::1'] }), 'k')),
    ).toBeNull();
    expect(refusal(() => assertWithinCaller(pinned, grant({ allowedIps: null }), 'k'))?.status).toBe(403);
    expect(refusal(() => assertWithinCaller(pinned, grant({ allowedIps: ['11.0.0.1'] }), 'k'))?.status).toBe(
      403,
    );
  });

  it('passes an IP-pinned caller’s pin on to a key that names none, and keeps a narrower one', () => {
    const pinned = key({ allowedIps: ['192.0.2.0/24'] });
    expect(inheritIpPin(pinned, grant({})).allowedIps).toEqual(['192.0.2.0/24']);
    expect(inheritIpPin(pinned, grant({ allowedIps: ['192.0.2.9'] })).allowedIps).toEqual(['192.0.2.9']);
    expect(inheritIpPin({ kind: 'session' }, grant({})).allowedIps).toBeNull();
    expect(inheritIpPin(key({}), grant({})).allowedIps).toBeNull();
  });
});

describe('assertPinWithinCaller (revocation)', () => {
  it('lets sessions and unpinned keys revoke any key', () => {
    for (const caller of [{ kind: 'session' } as const, key({ scopes: ['supervisor'] })]) {
      expect(refusal(() => assertPinWithinCaller(caller, { id: 'key_t', wallets: null }))).toBeNull();
      expect(refusal(() => assertPinWithinCaller(caller, { id: 'key_t', wallets: [W3] }))).toBeNull();
    }
  });

  it('refuses a pinned caller a target pinned elsewhere, or unpinned, with 403', () => {
    const pinned = key({ scopes: ['supervisor'], wallets: [W1, W2] });
    expect(refusal(() => assertPinWithinCaller(pinned, { id: 'key_t', wallets: [W1] }))).toBeNull();
    expect(refusal(() => assertPinWithinCaller(pinned, { id: 'key_t', wallets: [W1, W3] }))?.status).toBe(
      403,
    );
    expect(refusal(() => assertPinWithinCaller(pinned, { id: 'key_t', wallets: null }))?.status).toBe(403);
  });
});

describe('IP rules', () => {
  it.each([
    ['10.0.0.1', '10.0.0.1'],
    [' 10.0.0.0/8 ', '10.0.0.0/8'],
    ['10.1.2.3/8', '10.1.2.3/8'],
    ['::1', '::1'],
    ['2001:db8::/32', '2001:db8::/32'],
    ['::ffff:192.0.2.1', '::ffff:192.0.2.1'],
    ['0.0.0.0/0', '0.0.0.0/0'],
  ])('accepts %j as %j', (entry, canonical) => {
    expect(normalizeIpRule(entry)).toBe(canonical);
  });

  it.each([
    '',
    '10.0.0',
    '10.0.0.256',
    '010.0.0.1',
    '10.0.0.0/33',
    '10.0.0.0/-1',
    '10.0.0.0/8/8',
    '::1/129',
    'fe80::1%eth0',
    '10.0.0.0/ 8',
    'localhost',
    '1.2.3.4/1e1',
  ])('refuses %j', (entry) => {
    expect(normalizeIpRule(entry)).toBeNull();
  });

  it('decides containment by address range, per family', () => {
    expect(ipRulesWithin(['10.1.2.3'], ['10.0.0.0/8'])).toBe(true);
    expect(ipRulesWithin(['10.1.2.3/8'], ['10.0.0.0/8'])).toBe(true);
    expect(ipRulesWithin(['10.0.0.0/7'], ['10.0.0.0/8'])).toBe(false);
    expect(ipRulesWithin(['10.0.0.0/8'], ['10.0.0.0/9', '10.128.0.0/9'])).toBe(false);
    expect(ipRulesWithin(['192.0.2.7'], ['192.0.2.7'])).toBe(true);
    expect(ipRulesWithin(['192.0.2.8'], ['192.0.2.7'])).toBe(false);
    expect(ipRulesWithin(['2001:db8:0:1::/64'], ['2001:db8::/48'])).toBe(true);
    expect(ipRulesWithin(['2001:db9::1'], ['2001:db8::/32'])).toBe(false);
    expect(ipRulesWithin(['::ffff:192.0.2.1'], ['::ffff:192.0.2.0/120'])).toBe(true);
    expect(ipRulesWithin(['192.0.2.1'], ['::ffff:0:0/96'])).toBe(false);
    expect(ipRulesWithin(['::'], ['::/0'])).toBe(true);
    expect(ipRulesWithin(['1::'], ['1::/16'])).toBe(true);
  });
});

describe('request checks beyond the schema', () => {
  it('lowercases wallets and refuses a wallet pin with admin', () => {
    expect(parseCreateRequest({ wallets: [W1.toUpperCase().replace('0X', '0x')] }).wallets).toEqual([W1]);
    expect(refusal(() => parseCreateRequest({ scopes: ['admin'], wallets: [W1] }))?.status).toBe(400);
    expect(parseCreateRequest({ scopes: ['admin'] }).scopes).toEqual(['admin']);
    expect(parseCreateRequest({ scopes: ['supervisor'], wallets: [W1] }).scopes).toEqual(['supervisor']);
  });

  it('names every problem of an enrollment at once', () => {
    const err = refusal(() =>
      parseEnrollRequest({ agents: [{ wallet: W1 }, { wallet: W1 }, { wallet: W2, scopes: ['admin'] }] }),
    );
    expect(err?.status).toBe(400);
    expect(err?.message).toContain('agents[1].wallet repeats agents[0].wallet');
    expect(err?.message).toContain('agents[2].scopes');
  });
});
