// IP addresses as the jurisdiction gate reads them: every address (IPv4, IPv6, IPv4-mapped IPv6)
// becomes 16 bytes, IPv4 in its mapped form (::ffff:a.b.c.d), so `10.0.0.0/8` in the trusted
// proxies matches a socket that reports `::ffff:10.1.2.3` (a dual-stack listener) and a lookup
// of a mapped address finds the IPv4 network. Strict on purpose: an address that does not parse
// is never trusted and never looked up.

import { isIPv4, isIPv6 } from 'node:net';

/** 16 bytes, network order. */
export type AddressBytes = Uint8Array;

export interface ParsedAddress {
  bytes: AddressBytes;
  /** The address as a lookup wants it: dotted IPv4 for IPv4 and IPv4-mapped IPv6, else IPv6. */
  text: string;
  ipv4: boolean;
}

export interface Cidr {
  bytes: AddressBytes;
  /** Prefix length in the 128-bit space (an IPv4 /8 is 104). */
  prefix: number;
}

const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

function ipv4Bytes(text: string): number[] | null {
  if (!isIPv4(text)) return null;
  const parts = text.split('.');
  // Node accepts only canonical decimal octets here (no leading zeros, no octal, no hex).
  return parts.map((p) => Number(p));
}

function ipv6Bytes(text: string): number[] | null {
  if (!isIPv6(text)) return null;
  let head = text;
  let tail: number[] = [];
  const lastColon = head.lastIndexOf(':');
  const last = head.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = ipv4Bytes(last);
    if (!v4) return null;
    tail = v4;
    // Keep a trailing `::` (the zeros run up to the IPv4 part); drop a single trailing `:`.
    head = head.slice(0, lastColon + 1);
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const groupsNeeded = 8 - tail.length / 2;
  const [left = '', right] = head.split('::');
  const leftGroups = left === '' ? [] : left.split(':');
  const rightGroups = right === undefined || right === '' ? [] : right.split(':');
  let groups: string[];
  if (right === undefined) {
    groups = leftGroups;
  } else {
    const missing = groupsNeeded - leftGroups.length - rightGroups.length;
    if (missing < 0) return null;
    groups = [...leftGroups, ...Array<string>(missing).fill('0'), ...rightGroups];
  }
  if (groups.length !== groupsNeeded) return null;
  const out: number[] = [];
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const v = parseInt(g, 16);
    out.push(v >> 8, v & 0xff);
  }
  return [...out, ...tail];
}

/**
 * Parses one address: IPv4, IPv6 (with an optional zone, `fe80::1%eth0`, and optional brackets),
 * IPv4-mapped IPv6. Null for anything else (ports are the caller's business).
 */
export function parseAddress(raw: string): ParsedAddress | null {
  let text = raw.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone >= 0 && text.includes(':')) text = text.slice(0, zone);
  let bytes: number[] | null = ipv4Bytes(text);
  if (bytes) bytes = [...MAPPED_PREFIX, ...bytes];
  else bytes = ipv6Bytes(text);
  if (!bytes || bytes.length !== 16) return null;
  const array = Uint8Array.from(bytes);
  const ipv4 = MAPPED_PREFIX.every((b, i) => array[i] === b);
  return { bytes: array, ipv4, text: ipv4 ? array.subarray(12).join('.') : canonicalIpv6(array) };
}

function canonicalIpv6(bytes: AddressBytes): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  // Compress the longest run of two or more zero groups (RFC 5952).
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j += 1;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLength).join(':')}`;
}

/**
 * One trusted-proxy entry: an address or a CIDR block, IPv4 or IPv6. An IPv4 block also covers
 * the same addresses in IPv4-mapped form. Host bits below the prefix are ignored. Throws on
 * anything else, so a typo in configuration fails at start instead of trusting nothing (or all).
 */
export function parseCidr(entry: string): Cidr {
  const [addressPart = '', prefixPart, extra] = entry.trim().split('/');
  const address = parseAddress(addressPart);
  if (!address || extra !== undefined)
    throw new Error(`not an address or CIDR block: ${JSON.stringify(entry)}`);
  const v4Written = isIPv4(addressPart.trim());
  const max = v4Written ? 32 : 128;
  let prefix = max;
  if (prefixPart !== undefined) {
    if (!/^\d{1,3}$/.test(prefixPart) || Number(prefixPart) > max) {
      throw new Error(`prefix length out of range in ${JSON.stringify(entry)} (0 to ${max})`);
    }
    prefix = Number(prefixPart);
  }
  return { bytes: address.bytes, prefix: v4Written ? prefix + 96 : prefix };
}

export function inCidr(address: AddressBytes, cidr: Cidr): boolean {
  const whole = cidr.prefix >> 3;
  for (let i = 0; i < whole; i++) if (address[i] !== cidr.bytes[i]) return false;
  const bits = cidr.prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return ((address[whole] ?? 0) & mask) === ((cidr.bytes[whole] ?? 0) & mask);
}

const LOOPBACK = [parseCidr('127.0.0.0/8'), parseCidr('::1/128')];

/** 127.0.0.0/8 (plain or IPv4-mapped) and ::1. */
export function isLoopback(address: AddressBytes): boolean {
  return LOOPBACK.some((c) => inCidr(address, c));
}

/**
 * One X-Forwarded-For entry as proxies write it: an address, possibly with a port
 * (`203.0.113.7:51234`, `[2001:db8::1]:443`). Null for anything else (`unknown`, obfuscated
 * identifiers, garbage).
 */
export function parseForwardedEntry(entry: string): ParsedAddress | null {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) return parseAddress(bracketed[1] ?? '');
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text);
  if (v4WithPort) return parseAddress(v4WithPort[1] ?? '');
  return parseAddress(text);
}
