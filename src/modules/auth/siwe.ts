// Sign-In with Ethereum (EIP-4361) messages: the builder for the challenges this service hands
// out, and a strict parser for what comes back. Verification compares the parsed FIELDS with the
// environment and with the challenge issued, never the bytes: a client may rebuild the message
// with another library (the `siwe` package, viem's createSiweMessage) as long as every field says
// the same thing.

import { isAddress } from 'viem';

/** Chains a sign-in may name: Base, Base Sepolia and Polygon (design decisions, "Chains"). */
export const SIWE_CHAIN_IDS: readonly number[] = [8453, 84532, 137];
/** A challenge's nonce is single use and valid this long (spec section 8). */
export const SIWE_NONCE_TTL_MS = 10 * 60 * 1000;
/** Tolerated difference between the signer's clock and ours for Issued At and Not Before. */
export const SIWE_CLOCK_SKEW_MS = 5 * 60 * 1000;
export const SIWE_STATEMENT =
  'Sign in to Purser with this wallet. Signing proves you control the address; it moves no funds and costs no gas.';

const HEADER_SUFFIX = ' wants you to sign in with your Ethereum account:';
const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*$/;
// RFC 3986 authority characters (host, port, userinfo); no path, no whitespace.
const AUTHORITY = /^[A-Za-z0-9._~!$&'()*+,;=:%@[\]-]+$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
// Printable ASCII: the ERC's statement grammar is narrower, but anything a wallet can show on one line is fine.
const STATEMENT = /^[\x20-\x7e]+$/;
const URI = /^[a-zA-Z][a-zA-Z0-9+.-]*:[\x21-\x7e]*$/;
const NONCE = /^[a-zA-Z0-9]{8,}$/;
const CHAIN_ID = /^[0-9]{1,15}$/;
const REQUEST_ID = /^[A-Za-z0-9._~!$&'()*+,;=:@%-]*$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|([+-])(\d{2}):(\d{2}))$/;

/** Every field of an EIP-4361 message, as written in it. */
export interface SiweFields {
  scheme: string | null;
  domain: string;
  /** As written (checksummed or lowercase). */
  address: string;
  statement: string | null;
  uri: string;
  version: string;
  chainId: number;
  nonce: string;
  issuedAt: Date;
  expirationTime: Date | null;
  notBefore: Date | null;
  requestId: string | null;
  /** Null when the message has no Resources section. */
  resources: string[] | null;
}

export interface BuildSiweMessageParameters {
  domain: string;
  address: string;
  statement?: string;
  uri: string;
  chainId: number;
  nonce: string;
  issuedAt: Date;
  expirationTime?: Date;
}

/**
 * The EIP-4361 text of a challenge, line by line as the ERC's ABNF lays it out (LF separators,
 * no trailing newline). Produces the same bytes as viem's createSiweMessage and the `siwe`
 * package's prepareMessage for the same fields.
 */
export function buildSiweMessage(p: BuildSiweMessageParameters): string {
  const lines = [`${p.domain}${HEADER_SUFFIX}`, p.address, ''];
  if (p.statement !== undefined) {
    if (!STATEMENT.test(p.statement)) throw new Error('SIWE statement must be one line of printable ASCII');
    lines.push(p.statement, '');
  } else {
    lines.push('');
  }
  lines.push(
    `URI: ${p.uri}`,
    'Version: 1',
    `Chain ID: ${p.chainId}`,
    `Nonce: ${p.nonce}`,
    `Issued At: ${p.issuedAt.toISOString()}`,
  );
  if (p.expirationTime) lines.push(`Expiration Time: ${p.expirationTime.toISOString()}`);
  return lines.join('\n');
}

export type ParseSiweResult = { ok: true; fields: SiweFields } | { ok: false; reason: string };

/**
 * Parses a message strictly by the ERC-4361 ABNF: the lines in their order, no extra lines, no
 * trailing newline, no carriage returns, RFC 3339 dates that name real instants. Never throws.
 */
export function parseSiweMessage(text: string): ParseSiweResult {
  const fail = (reason: string): ParseSiweResult => ({ ok: false, reason });
  if (text.includes('\r')) return fail('it contains a carriage return (lines are separated by LF only)');
  const lines = text.split('\n');
  let i = 0;
  const next = (): string | undefined => lines[i++];

  const header = next() ?? '';
  if (!header.endsWith(HEADER_SUFFIX)) return fail('the first line is not "<domain> wants you to sign in…"');
  const origin = header.slice(0, -HEADER_SUFFIX.length);
  let scheme: string | null = null;
  let domain = origin;
  const sep = origin.indexOf('://');
  if (sep >= 0) {
    scheme = origin.slice(0, sep);
    domain = origin.slice(sep + 3);
    if (!SCHEME.test(scheme)) return fail('the scheme is malformed');
  }
  if (!AUTHORITY.test(domain)) return fail('the domain is malformed');

  const address = next() ?? '';
  if (!ADDRESS.test(address)) return fail('the second line is not an address (0x and 40 hex characters)');
  if (next() !== '') return fail('an empty line must follow the address');

  let statement: string | null = null;
  const afterAddress = next();
  if (afterAddress === undefined) return fail('it ends after the address');
  if (afterAddress !== '') {
    if (!STATEMENT.test(afterAddress)) return fail('the statement is not printable ASCII');
    statement = afterAddress;
    if (next() !== '') return fail('an empty line must follow the statement');
  }

  const field = (name: string): string | null => {
    const line = lines[i];
    if (line === undefined || !line.startsWith(`${name}: `)) return null;
    i++;
    return line.slice(name.length + 2);
  };

  const uri = field('URI');
  if (uri === null || !URI.test(uri)) return fail('the URI line is missing or malformed');
  const version = field('Version');
  if (version === null || version === '') return fail('the Version line is missing');
  const chainIdText = field('Chain ID');
  if (chainIdText === null || !CHAIN_ID.test(chainIdText))
    return fail('the Chain ID line is missing or malformed');
  const nonce = field('Nonce');
  if (nonce === null || !NONCE.test(nonce)) return fail('the Nonce line is missing or malformed');
  const issuedAtText = field('Issued At');
  if (issuedAtText === null) return fail('the Issued At line is missing');
  const issuedAt = parseDateTime(issuedAtText);
  if (!issuedAt) return fail('Issued At is not an RFC 3339 date-time');

  let expirationTime: Date | null = null;
  const expirationText = field('Expiration Time');
  if (expirationText !== null) {
    expirationTime = parseDateTime(expirationText);
    if (!expirationTime) return fail('Expiration Time is not an RFC 3339 date-time');
  }
  let notBefore: Date | null = null;
  const notBeforeText = field('Not Before');
  if (notBeforeText !== null) {
    notBefore = parseDateTime(notBeforeText);
    if (!notBefore) return fail('Not Before is not an RFC 3339 date-time');
  }
  let requestId: string | null = null;
  if (lines[i] === 'Request ID:' || lines[i]?.startsWith('Request ID: ')) {
    requestId = (lines[i++] ?? '').slice('Request ID: '.length);
    if (!REQUEST_ID.test(requestId)) return fail('the Request ID is malformed');
  }
  let resources: string[] | null = null;
  if (lines[i] === 'Resources:') {
    i++;
    resources = [];
    while (lines[i]?.startsWith('- ')) {
      const resource = (lines[i++] ?? '').slice(2);
      if (!URI.test(resource)) return fail('a resource is not a URI');
      resources.push(resource);
    }
  }
  if (i < lines.length) {
    return fail(
      lines[lines.length - 1] === '' && i === lines.length - 1
        ? 'it ends with a newline'
        : `line ${i + 1} is unexpected`,
    );
  }
  return {
    ok: true,
    fields: {
      scheme,
      domain,
      address,
      statement,
      uri,
      version,
      chainId: Number(chainIdText),
      nonce,
      issuedAt,
      expirationTime,
      notBefore,
      requestId,
      resources,
    },
  };
}

/** An RFC 3339 date-time naming a real instant (no 30 February, no hour 24), or null. */
export function parseDateTime(text: string): Date | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const wall = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (
    wall.getUTCFullYear() !== year ||
    wall.getUTCMonth() !== month - 1 ||
    wall.getUTCDate() !== day ||
    wall.getUTCHours() !== hour ||
    wall.getUTCMinutes() !== minute ||
    wall.getUTCSeconds() !== second
  ) {
    return null;
  }
  if (m[9] !== undefined && (Number(m[10]) > 23 || Number(m[11]) > 59)) return null;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

export interface SiweEnvironment {
  domain: string;
  uri: string;
  /** The challenge's chain and address (lowercase), from the nonce row. */
  chainId: number;
  address: string;
  /** When the challenge was issued. */
  challengeIssuedAt: Date;
  now: Date;
}

/**
 * Every way the message's fields disagree with this environment and its challenge; empty when
 * they agree. Time-of-use checks (expiry, not-before) are separate: see `timeProblems`.
 */
export function fieldProblems(f: SiweFields, env: SiweEnvironment): string[] {
  const problems: string[] = [];
  if (f.domain.toLowerCase() !== env.domain.toLowerCase()) {
    problems.push(`domain is "${f.domain}", expected "${env.domain}"`);
  }
  if (f.scheme !== null) {
    const expected = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(env.uri)?.[1]?.toLowerCase();
    if (f.scheme.toLowerCase() !== expected) {
      problems.push(`scheme is "${f.scheme}", expected "${expected ?? 'none'}"`);
    }
  }
  if (f.uri !== env.uri) problems.push(`URI is "${f.uri}", expected "${env.uri}"`);
  if (f.version !== '1') problems.push(`Version is "${f.version}", expected "1"`);
  if (f.chainId !== env.chainId) {
    problems.push(`Chain ID is ${f.chainId}, but the challenge was issued for chain ${env.chainId}`);
  }
  if (!isAddress(f.address, { strict: true })) {
    problems.push('the address has a wrong EIP-55 checksum');
  } else if (f.address.toLowerCase() !== env.address) {
    problems.push('the address is not the one the challenge was issued for');
  }
  if (f.resources !== null) {
    problems.push('Resources are not accepted: a session carries every scope of the account');
  }
  const skew = SIWE_CLOCK_SKEW_MS;
  if (f.issuedAt.getTime() < env.challengeIssuedAt.getTime() - skew) {
    problems.push('Issued At is before the challenge was issued');
  }
  if (f.issuedAt.getTime() > env.now.getTime() + skew) problems.push('Issued At is in the future');
  if (f.expirationTime && f.expirationTime.getTime() <= f.issuedAt.getTime()) {
    problems.push('Expiration Time is not after Issued At');
  }
  if (f.notBefore && f.expirationTime && f.notBefore.getTime() >= f.expirationTime.getTime()) {
    problems.push('Not Before is not before Expiration Time');
  }
  return problems;
}

/**
 * Every field in which a signed message differs from the challenge that was issued (both parsed):
 * empty when it says the same thing. Fields are compared by meaning, not bytes, so a message
 * rebuilt by another library is accepted: the domain and the address ignore case (a host name,
 * one account; the address's EIP-55 checksum is checked by `fieldProblems`), dates compare as
 * instants; every other field, and whether an optional field is there at all, must be equal.
 */
export function challengeProblems(signed: SiweFields, issued: SiweFields): string[] {
  const problems: string[] = [];
  const text = (v: string | null) => (v === null ? 'absent' : `"${v}"`);
  const instant = (v: Date | null) => (v === null ? 'absent' : v.toISOString());
  const differs = (field: string, a: string, b: string) => {
    problems.push(`${field} is ${a}, the challenge says ${b}`);
  };
  if ((signed.scheme?.toLowerCase() ?? null) !== (issued.scheme?.toLowerCase() ?? null)) {
    differs('the scheme', text(signed.scheme), text(issued.scheme));
  }
  if (signed.domain.toLowerCase() !== issued.domain.toLowerCase()) {
    differs('the domain', text(signed.domain), text(issued.domain));
  }
  if (signed.address.toLowerCase() !== issued.address.toLowerCase()) {
    differs('the address', signed.address, issued.address);
  }
  if (signed.statement !== issued.statement) {
    differs('the statement', text(signed.statement), text(issued.statement));
  }
  if (signed.uri !== issued.uri) differs('URI', text(signed.uri), text(issued.uri));
  if (signed.version !== issued.version) differs('Version', text(signed.version), text(issued.version));
  if (signed.chainId !== issued.chainId) differs('Chain ID', String(signed.chainId), String(issued.chainId));
  if (signed.nonce !== issued.nonce) differs('Nonce', signed.nonce, issued.nonce);
  const dates = [
    ['Issued At', signed.issuedAt, issued.issuedAt],
    ['Expiration Time', signed.expirationTime, issued.expirationTime],
    ['Not Before', signed.notBefore, issued.notBefore],
  ] as const;
  for (const [field, a, b] of dates) {
    if ((a?.getTime() ?? null) !== (b?.getTime() ?? null)) differs(field, instant(a), instant(b));
  }
  if (signed.requestId !== issued.requestId) {
    differs('Request ID', text(signed.requestId), text(issued.requestId));
  }
  const resources = (v: string[] | null) => (v === null ? 'absent' : JSON.stringify(v));
  if (resources(signed.resources) !== resources(issued.resources)) {
    differs('Resources', resources(signed.resources), resources(issued.resources));
  }
  return problems;
}

/** Whether the message itself has expired, or is not valid yet, at `now`. */
export function timeProblems(f: SiweFields, now: Date): { expired: boolean; notYetValid: boolean } {
  return {
    expired: f.expirationTime !== null && f.expirationTime.getTime() <= now.getTime(),
    notYetValid: f.notBefore !== null && f.notBefore.getTime() > now.getTime() + SIWE_CLOCK_SKEW_MS,
  };
}
