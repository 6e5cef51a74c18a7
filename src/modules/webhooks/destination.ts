// Which webhook destinations are allowed. Production: https only, and never a loopback, private,
// link-local, CGNAT, multicast or unspecified address, neither as a literal nor after DNS
// resolution (checked at registration and again on every delivery, through the connection's own
// lookup so a rebinding answer cannot slip in between). Development also admits http.

import { lookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { invalidRequest } from '../../core/errors/app-error.ts';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** Why an address may not receive webhooks in production, or null when it may. */
export function refusedAddressReason(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'it is not an IP address';
  let v4 = family === 4 ? address : null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) v4 = mapped[1];
  const hit = v4 ? blocked.check(v4, 'ipv4') : blocked.check(address, 'ipv6');
  if (!hit) return null;
  if (v4?.startsWith('127.') || address === '::1') return `${address} is a loopback address`;
  if (v4?.startsWith('169.254.') || /^fe[89ab]/i.test(address)) return `${address} is a link-local address`;
  return `${address} is a private or reserved address`;
}

export interface DestinationRules {
  production: boolean;
}

/** Checks the form of a destination URL; throws 400 INVALID_REQUEST naming the reason. */
export function parseDestination(raw: string, rules: DestinationRules): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidRequest('url is not an absolute URL.');
  }
  if (url.username || url.password) throw invalidRequest('url must not carry credentials.');
  if (url.hash) throw invalidRequest('url must not carry a fragment.');
  if (rules.production) {
    if (url.protocol !== 'https:') throw invalidRequest('url must use https in production.');
  } else if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalidRequest('url must use http or https.');
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (rules.production) {
    if (host === 'localhost' || host.endsWith('.localhost')) {
      throw invalidRequest('url must not point at a loopback host in production.');
    }
    if (isIP(host) !== 0) {
      const reason = refusedAddressReason(host);
      if (reason) throw invalidRequest(`url must be publicly routable in production: ${reason}.`);
    }
  }
  return url;
}

/** Resolves the host and refuses it when any of its addresses is not publicly routable. */
export async function checkResolvedDestination(url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = await new Promise<{ address: string }[]>((resolve, reject) => {
    lookup(host, { all: true }, (err, result) => (err ? reject(err) : resolve(result)));
  }).catch((err: unknown) => {
    throw invalidRequest(`url host ${host} does not resolve (${(err as Error).message}).`);
  });
  for (const { address } of addresses) {
    const reason = refusedAddressReason(address);
    if (reason)
      throw invalidRequest(`url must be publicly routable in production: ${host} resolves to ${reason}.`);
  }
}

/** A `lookup` for http(s).request that refuses addresses production may not reach. */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    for (const { address } of addresses) {
      const reason = refusedAddressReason(address);
      if (reason) return callback(new Error(`destination refused: ${hostname} resolves to ${reason}`), '', 0);
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
    callback(null, first.address, first.family);
  });
};
