import { BlockList, isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { DbExecutor } from '../../core/db/database.ts';
import type { FieldWalletLocator, Scope, ScopeRule, WalletLocator } from '../../core/http/route-table.ts';

export const ALL_SCOPES: Scope[] = ['read', 'write', 'admin', 'supervisor'];

/** The API-key scopes each rule admits. Sessions pass every rule. */
export const SCOPE_RULES: Record<ScopeRule, readonly Scope[]> = {
  read: ['read', 'write', 'supervisor', 'admin'],
  write: ['write', 'admin'],
  cancel: ['write', 'supervisor', 'admin'],
  supervisor: ['supervisor', 'admin'],
  admin: ['admin'],
  'admin-or-supervisor': ['admin', 'supervisor'],
};

export function keyMeetsRule(scopes: readonly Scope[], rule: ScopeRule): boolean {
  return scopes.some((s) => SCOPE_RULES[rule].includes(s));
}

/** The scopes a key holds in effect: admin implies everything, write and supervisor imply read. */
export function effectiveScopes(scopes: readonly Scope[]): Set<Scope> {
  const out = new Set<Scope>(scopes);
  if (out.has('admin')) ALL_SCOPES.forEach((s) => out.add(s));
  if (out.has('write') || out.has('supervisor')) out.add('read');
  return out;
}

/**
 * The wallets a wallet-bearing request acts for, lowercased, read where the route table says.
 * Returns null when the request names none (a pinned key is then denied: deny by default).
 */
export function walletsOfRequest(req: FastifyRequest, locator: FieldWalletLocator): string[] | null {
  const source = (locator.in === 'body' ? req.body : locator.in === 'query' ? req.query : req.params) as
    Record<string, unknown> | undefined;
  const value = source?.[locator.field];
  const values: unknown[] = locator.many ? (Array.isArray(value) ? value : []) : [value];
  const wallets = values.map((v) =>
    locator.itemField && v && typeof v === 'object' ? (v as Record<string, unknown>)[locator.itemField] : v,
  );
  if (wallets.length === 0 || wallets.some((w) => typeof w !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(w))) {
    return null;
  }
  return (wallets as string[]).map((w) => w.toLowerCase());
}

/**
 * Like walletsOfRequest, for every locator: a `resource` locator asks its resolver for the
 * wallet of the account's resource the path names (null when there is none).
 */
export async function walletsOfRoute(
  db: DbExecutor,
  accountId: string,
  req: FastifyRequest,
  locator: WalletLocator,
): Promise<string[] | null> {
  if (locator.in !== 'resource') return walletsOfRequest(req, locator);
  const wallet = await locator.resolve(
    db,
    accountId,
    (req.params ?? {}) as Record<string, unknown>,
    req.body,
  );
  return wallet && /^0x[0-9a-fA-F]{40}$/.test(wallet) ? [wallet.toLowerCase()] : null;
}

/** Parses an allowed_ips entry (an IPv4 or IPv6 address, or a CIDR block); null when malformed. */
export function parseIpRule(
  entry: string,
): { address: string; prefix: number | null; family: 'ipv4' | 'ipv6' } | null {
  const [address = '', prefixText, ...rest] = entry.trim().split('/');
  if (rest.length > 0) return null;
  const version = isIP(address);
  if (version === 0) return null;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (prefixText === undefined) return { address, prefix: null, family };
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  if (prefix > (family === 'ipv4' ? 32 : 128)) return null;
  return { address, prefix, family };
}

/** Whether a client address falls inside an allowed_ips list. IPv4-mapped IPv6 counts as IPv4. */
export function ipAllowed(clientIp: string, allowed: readonly string[]): boolean {
  const list = new BlockList();
  for (const entry of allowed) {
    const rule = parseIpRule(entry);
    if (!rule) continue;
    if (rule.prefix === null) list.addAddress(rule.address, rule.family);
    else list.addSubnet(rule.address, rule.prefix, rule.family);
  }
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(clientIp);
  const ip = mapped ? mapped[1]! : clientIp;
  const version = isIP(ip);
  if (version === 0) return false;
  return list.check(ip, version === 4 ? 'ipv4' : 'ipv6');
}
