// Address parsing and CIDR matching as the gate uses them for trusted proxies and lookups.

import { describe, expect, it } from 'vitest';
import { inCidr, isLoopback, parseAddress, parseCidr, parseForwardedEntry } from './addresses.ts';

const bytes = (text: string) => {
  const parsed = parseAddress(text);
  if (!parsed) throw new Error(`test address does not parse: ${text}`);
  return parsed.bytes;
};

describe('parseAddress', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9', true],
    ['::ffff:203.0.113.9', '203.0.113.9', true],
    ['::FFFF:cb00:7109', '203.0.113.9', true],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1', false],
    ['[2001:db8::1]', '2001:db8::1', false],
    ['fe80::1%eth0', 'fe80::1', false],
    ['::1', '::1', false],
    ['::', '::', false],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221', false],
  ])('%s → %s', (input, text, ipv4) => {
    expect(parseAddress(input)).toMatchObject({ text, ipv4 });
  });

  it.each([
    '',
    'localhost',
    '203.0.113',
    '203.0.113.256',
    '010.0.0.1',
    '1.2.3.4.5',
    '2001:db8::1::2',
    'g::1',
    ' ',
  ])('refuses %j', (input) => {
    expect(parseAddress(input)).toBeNull();
  });
});

describe('parseCidr and inCidr', () => {
  it('matches an IPv4 block, in plain and IPv4-mapped form', () => {
    const block = parseCidr('10.0.0.0/8');
    expect(inCidr(bytes('10.255.1.2'), block)).toBe(true);
    expect(inCidr(bytes('::ffff:10.1.2.3'), block)).toBe(true);
    expect(inCidr(bytes('11.0.0.1'), block)).toBe(false);
    expect(inCidr(bytes('9.255.255.255'), block)).toBe(false);
  });

  it('matches prefixes that do not fall on a byte boundary', () => {
    const block = parseCidr('192.0.2.64/26');
    expect(inCidr(bytes('192.0.2.64'), block)).toBe(true);
    expect(inCidr(bytes('192.0.2.127'), block)).toBe(true);
    expect(inCidr(bytes('192.0.2.63'), block)).toBe(false);
    expect(inCidr(bytes('192.0.2.128'), block)).toBe(false);
    const v6 = parseCidr('2001:db8:abcd:12::/63');
    expect(inCidr(bytes('2001:db8:abcd:13:ffff::1'), v6)).toBe(true);
    expect(inCidr(bytes('2001:db8:abcd:14::1'), v6)).toBe(false);
  });

  it('treats a bare address as a single host and ignores host bits below the prefix', () => {
    const host = parseCidr('2001:db8::7');
    expect(inCidr(bytes('2001:db8::7'), host)).toBe(true);
    expect(inCidr(bytes('2001:db8::8'), host)).toBe(false);
    expect(inCidr(bytes('10.9.9.9'), parseCidr('10.1.2.3/8'))).toBe(true);
  });

  it('does not let an IPv6 block cover IPv4 by accident, except ::/0', () => {
    expect(inCidr(bytes('203.0.113.9'), parseCidr('2001:db8::/32'))).toBe(false);
    expect(inCidr(bytes('203.0.113.9'), parseCidr('::/0'))).toBe(true);
    expect(inCidr(bytes('203.0.113.9'), parseCidr('0.0.0.0/0'))).toBe(true);
    expect(inCidr(bytes('2001:db8::1'), parseCidr('0.0.0.0/0'))).toBe(false);
  });

  it.each([
    '10.0.0.0/33',
    '2001:db8::/129',
    '10.0.0.0/',
    '10.0.0.0/8/8',
    'proxy.internal',
    '10.0.0.0/-1',
    '10.0.0/8',
  ])('throws on %j', (entry) => {
    expect(() => parseCidr(entry)).toThrow();
  });
});

describe('isLoopback', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['::ffff:127.0.0.1', true],
    ['::1', true],
    ['128.0.0.1', false],
    ['::2', false],
    ['10.0.0.1', false],
  ])('%s → %s', (address, loopback) => {
    expect(isLoopback(bytes(address))).toBe(loopback);
  });
});

describe('parseForwardedEntry', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    [' 203.0.113.7:51234 ', '203.0.113.7'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['2001:db8::1', '2001:db8::1'],
  ])('%j → %s', (entry, text) => {
    expect(parseForwardedEntry(entry)?.text).toBe(text);
  });

  it.each(['unknown', '_hidden', '', '203.0.113.7:port', 'http://203.0.113.7'])('refuses %j', (entry) => {
    expect(parseForwardedEntry(entry)).toBeNull();
  });
});
