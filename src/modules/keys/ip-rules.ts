// allowed_ips entries as address ranges: validation to a canonical form, and whether one list of
// rules lies inside another (a key made by an IP-pinned key must not reach beyond its maker).

import { BlockList } from 'node:net';
import { parseIpRule } from '../auth/scopes.ts';

interface IpRange {
  family: 'ipv4' | 'ipv6';
  first: bigint;
  last: bigint;
}

/**
 * The canonical form of an allowed_ips entry (`address` or `address/prefix`, trimmed), or null
 * when the guard could not use it: malformed, a prefix beyond the family's width, or an IPv6
 * zone (`fe80::1%eth0`), which never appears in a client address.
 */
export function normalizeIpRule(entry: string): string | null {
  const rule = parseIpRule(entry);
  if (!rule || rule.address.includes('%')) return null;
  const list = new BlockList();
  try {
    if (rule.prefix === null) list.addAddress(rule.address, rule.family);
    else list.addSubnet(rule.address, rule.prefix, rule.family);
  } catch {
    return null;
  }
  return rule.prefix === null ? rule.address : `${rule.address}/${rule.prefix}`;
}

/** Whether every address `inner` admits is admitted by one of the `outer` rules. */
export function ipRulesWithin(inner: readonly string[], outer: readonly string[]): boolean {
  const outerRanges = outer.map(rangeOf).filter((r): r is IpRange => r !== null);
  return inner.every((entry) => {
    const range = rangeOf(entry);
    return (
      range !== null &&
      outerRanges.some((o) => o.family === range.family && o.first <= range.first && range.last <= o.last)
    );
  });
}

function rangeOf(entry: string): IpRange | null {
  const rule = parseIpRule(entry);
  if (!rule) return null;
  const bits = rule.family === 'ipv4' ? 32 : 128;
  const value = rule.family === 'ipv4' ? ipv4Value(rule.address) : ipv6Value(rule.address);
  if (value === null) return null;
  const prefix = rule.prefix ?? bits;
  const hostBits = BigInt(bits - prefix);
  const first = (value >> hostBits) << hostBits;
  const last = first + (1n << hostBits) - 1n;
  return { family: rule.family, first, last };
}

function ipv4Value(address: string): bigint | null {
  const parts = address.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function ipv6Value(address: string): bigint | null {
  if (address.includes('%')) return null;
  let text = address;
  // A trailing dotted IPv4 part (`::ffff:1.2.3.4`) stands for the last two groups.
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4Value(dotted[2] ?? '');
    if (v4 === null) return null;
    text = `${dotted[1] ?? ''}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array.from({ length: halves.length === 2 ? missing : 0 }, () => '0'), ...tail];
  let value = 0n;
  for (const group of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    value = (value << 16n) | BigInt(`0x${group}`);
  }
  return value;
}
