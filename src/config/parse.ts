// The parsers of the settings that are more than a number or a string: JSON objects, lists,
// addresses and keys. Each reports what is wrong into the problems loadConfig gathers.

import { parseCountryList } from '../adapters/geo/countries.ts';
import { DEFAULT_RESTRICTED_COUNTRIES } from '../adapters/geo/restricted.ts';
import { parseKeyMaterial, PUBLIC_DEV_KEY_ID, SEALING_KEY_ID_PATTERN } from '../core/sealing.ts';
import { parsePmRateLanes, type PmRateLanes } from './rate-lanes.ts';
import {
  type PmContracts,
  POLYMARKET_CONTRACTS,
  type PmConfig,
  type CctpChain,
  type CctpConfig,
  CIRCLE_CCTP_V2,
  CCTP_DOMAINS,
  type StatementsS3Config,
  type PriceFeedConfig,
  DEFAULT_PRICE_FEEDS,
  DEFAULT_SEQUENCER_FEEDS,
  DEFAULT_CONFIRMATIONS,
  SUPPORTED_CHAINS,
} from './settings.ts';

export const S3_SETTINGS = [
  'STATEMENTS_S3_ENDPOINT',
  'STATEMENTS_S3_BUCKET',
  'STATEMENTS_S3_ACCESS_KEY_ID',
  'STATEMENTS_S3_SECRET_ACCESS_KEY',
] as const;

/** The statements bucket: all four settings or none (the region defaults to us-east-1). */
export function parseStatementsS3(
  str: (name: string) => string | undefined,
  problems: string[],
): StatementsS3Config | null {
  const present = S3_SETTINGS.filter((name) => str(name) !== undefined);
  if (present.length === 0) {
    if (str('STATEMENTS_S3_REGION') !== undefined) problems.push('STATEMENTS_S3_REGION needs a bucket');
    return null;
  }
  if (present.length < S3_SETTINGS.length) {
    const missing = S3_SETTINGS.filter((name) => str(name) === undefined);
    problems.push(`a statements bucket needs ${missing.join(', ')} as well`);
    return null;
  }
  const endpoint = (str('STATEMENTS_S3_ENDPOINT') ?? '').replace(/\/+$/, '');
  const bucket = str('STATEMENTS_S3_BUCKET') ?? '';
  const region = str('STATEMENTS_S3_REGION') ?? 'us-east-1';
  let endpointOk = false;
  try {
    const url = new URL(endpoint);
    endpointOk = (url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash;
  } catch {
    endpointOk = false;
  }
  if (!endpointOk) problems.push('STATEMENTS_S3_ENDPOINT must be an http(s) URL without a query');
  // S3 bucket naming rules: 3 to 63 lowercase letters, digits, dots and hyphens.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    problems.push('STATEMENTS_S3_BUCKET must be a bucket name (3 to 63 lowercase letters, digits, . and -)');
  }
  if (!/^[a-z0-9-]{1,32}$/.test(region)) problems.push('STATEMENTS_S3_REGION must be a region name');
  return {
    endpoint,
    bucket,
    region,
    accessKeyId: str('STATEMENTS_S3_ACCESS_KEY_ID') ?? '',
    secretAccessKey: str('STATEMENTS_S3_SECRET_ACCESS_KEY') ?? '',
  };
}

/**
 * `PRICE_FEEDS`: `{"<chain id>": {"<pair>": {"address": "0x…", "heartbeat_seconds": 1200,
 * "decimals": 8, "description": "…"} | null}}` over the defaults; null removes a default feed.
 */
export function parsePriceFeeds(
  raw: string | undefined,
  problems: string[],
): Record<number, Record<string, PriceFeedConfig>> {
  const feeds: Record<number, Record<string, PriceFeedConfig>> = {};
  for (const [chain, byPair] of Object.entries(DEFAULT_PRICE_FEEDS)) feeds[Number(chain)] = { ...byPair };
  if (raw === undefined) return feeds;
  const fail = (why: string) => {
    problems.push(
      `PRICE_FEEDS must be a JSON object of chain id → {pair: {"address", "heartbeat_seconds", "decimals"?, "description"?} or null}: ${why}`,
    );
    return feeds;
  };
  const entries = jsonObjectEntries(raw);
  if (typeof entries === 'string') return fail(entries);
  for (const [chain, byPair] of entries) {
    const chainId = Number(chain);
    if (!SUPPORTED_CHAINS.includes(chainId)) return fail(`${chain} is not a supported chain id`);
    if (typeof byPair !== 'object' || byPair === null || Array.isArray(byPair)) {
      return fail(`chain ${chain} must map pairs to feeds`);
    }
    const target = (feeds[chainId] ??= {});
    for (const [pair, entry] of Object.entries(byPair as Record<string, unknown>)) {
      if (!/^[A-Za-z0-9.]{1,16}\/[A-Za-z0-9.]{1,16}$/.test(pair))
        return fail(`${pair} is not a pair such as ETH/USD`);
      if (entry === null) {
        delete target[pair];
        continue;
      }
      if (typeof entry !== 'object' || Array.isArray(entry))
        return fail(`${chain} ${pair} must be an object or null`);
      const e = entry as Record<string, unknown>;
      const unknown = Object.keys(e).filter(
        (k) => !['address', 'heartbeat_seconds', 'decimals', 'description'].includes(k),
      );
      if (unknown.length > 0) return fail(`${chain} ${pair} has unknown fields ${unknown.join(', ')}`);
      if (typeof e.address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(e.address)) {
        return fail(`${chain} ${pair}.address must be an address`);
      }
      const heartbeat = e.heartbeat_seconds;
      if (
        typeof heartbeat !== 'number' ||
        !Number.isInteger(heartbeat) ||
        heartbeat < 1 ||
        heartbeat > 31_536_000
      ) {
        return fail(`${chain} ${pair}.heartbeat_seconds must be an integer from 1 to 31536000`);
      }
      const decimals = e.decimals;
      if (
        decimals !== undefined &&
        (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 36)
      ) {
        return fail(`${chain} ${pair}.decimals must be an integer from 0 to 36`);
      }
      if (e.description !== undefined && (typeof e.description !== 'string' || e.description.length > 64)) {
        return fail(`${chain} ${pair}.description must be a string`);
      }
      target[pair] = {
        address: e.address as `0x${string}`,
        heartbeatSeconds: heartbeat,
        ...(decimals === undefined ? {} : { decimals }),
        ...(e.description === undefined ? {} : { description: e.description }),
      };
    }
  }
  return feeds;
}

/** `PRICE_SEQUENCER_FEEDS`: `{"<chain id>": "0x…" | null}` over the defaults; null removes one. */
export function parseSequencerFeeds(
  raw: string | undefined,
  problems: string[],
): Record<number, `0x${string}`> {
  const feeds: Record<number, `0x${string}`> = { ...DEFAULT_SEQUENCER_FEEDS };
  if (raw === undefined) return feeds;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = null;
  }
  const entries =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? Object.entries(parsed as Record<string, unknown>)
      : null;
  const valid =
    entries?.every(
      ([chain, address]) =>
        SUPPORTED_CHAINS.includes(Number(chain)) &&
        (address === null || (typeof address === 'string' && /^0x[0-9a-fA-F]{40}$/.test(address))),
    ) ?? false;
  if (!entries || !valid) {
    problems.push('PRICE_SEQUENCER_FEEDS must be a JSON object of supported chain id → address or null');
    return feeds;
  }
  for (const [chain, address] of entries) {
    if (address === null) delete feeds[Number(chain)];
    else feeds[Number(chain)] = address as `0x${string}`;
  }
  return feeds;
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host !== '';
  } catch {
    return false;
  }
}

/** `{"<chain id>": {"<symbol>": "0x<address>"}}`, development only (see Config.devnet.tokenAddresses). */
export function parseDevnetTokenAddresses(
  raw: string | undefined,
  production: boolean,
  problems: string[],
): Record<number, Record<string, `0x${string}`>> | null {
  if (raw === undefined) return null;
  if (production) {
    problems.push('DEVNET_TOKEN_ADDRESSES is refused in production: the registry lists real addresses only');
    return null;
  }
  const fail = () => {
    problems.push(
      'DEVNET_TOKEN_ADDRESSES must be a JSON object of chain id → {symbol: address}, e.g. {"8453":{"USDC":"0x…"}}',
    );
    return null;
  };
  const entries = jsonObjectEntries(raw);
  if (typeof entries === 'string') return fail();
  const out: Record<number, Record<string, `0x${string}`>> = {};
  for (const [chain, tokens] of entries) {
    if (!SUPPORTED_CHAINS.includes(Number(chain)) || typeof tokens !== 'object' || tokens === null)
      return fail();
    const byToken: Record<string, `0x${string}`> = {};
    for (const [symbol, address] of Object.entries(tokens as Record<string, unknown>)) {
      if (typeof address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(address)) return fail();
      byToken[symbol] = address as `0x${string}`;
    }
    out[Number(chain)] = byToken;
  }
  return out;
}

export function parseTrustProxy(raw: string | undefined, problems: string[]): boolean | number | string[] {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d{1,2}$/.test(raw)) return Number(raw);
  const entries = raw.split(',').map((s) => s.trim());
  if (entries.some((e) => !/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(e))) {
    problems.push(
      'TRUST_PROXY must be false, true, a hop count, or a comma-separated list of addresses/CIDR blocks',
    );
    return false;
  }
  return entries;
}

export const PM_CONTRACT_FIELDS: Record<keyof PmContracts, string> = {
  collateral: 'collateral',
  usdce: 'usdce',
  onramp: 'onramp',
  conditionalTokens: 'conditional_tokens',
  exchange: 'exchange',
  negRiskExchange: 'neg_risk_exchange',
  negRiskAdapter: 'neg_risk_adapter',
};

/**
 * `PM_CONTRACTS`: a JSON object overriding some of Polymarket's addresses on Polygon, keys
 * `collateral, usdce, onramp, conditional_tokens, exchange, neg_risk_exchange, neg_risk_adapter`.
 */
export function parsePmContracts(raw: string | undefined, problems: string[]): PmContracts {
  if (raw === undefined) return { ...POLYMARKET_CONTRACTS };
  const entries = jsonObjectEntries(raw);
  const fail = (why: string) => {
    problems.push(`PM_CONTRACTS must be a JSON object of contract name → address: ${why}`);
    return { ...POLYMARKET_CONTRACTS };
  };
  if (typeof entries === 'string') return fail(entries);
  const out: PmContracts = { ...POLYMARKET_CONTRACTS };
  const byField = new Map(Object.entries(PM_CONTRACT_FIELDS).map(([k, f]) => [f, k as keyof PmContracts]));
  for (const [field, value] of entries) {
    const key = byField.get(field);
    if (!key) return fail(`unknown contract "${field}" (known: ${[...byField.keys()].join(', ')})`);
    if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value))
      return fail(`"${field}" must be an address`);
    out[key] = value.toLowerCase() as `0x${string}`;
  }
  return out;
}

export function pmFaultCrash(raw: string | undefined, problems: string[]): PmConfig['faultCrash'] {
  if (raw === undefined || raw === '') return null;
  if (raw === 'after_transmit') return raw;
  problems.push('PURSER_FAULT_PM_ORDER_CRASH must be after_transmit');
  return null;
}

export function pmRateLanes(raw: string | undefined, problems: string[]): PmRateLanes {
  const parsed = parsePmRateLanes(raw);
  problems.push(...parsed.problems);
  return parsed.lanes;
}

/** `PM_RESTRICTED_COUNTRIES`: ISO 3166-1 alpha-2 codes, comma-separated; default Polymarket's list. */
export function countryList(raw: string | undefined, problems: string[]): string[] {
  if (raw === undefined) return [...DEFAULT_RESTRICTED_COUNTRIES];
  const entries = raw
    .split(',')
    .map((e) => e.trim().toUpperCase())
    .filter((e) => e !== '');
  try {
    return [...parseCountryList(entries, 'PM_RESTRICTED_COUNTRIES')];
  } catch (err) {
    problems.push((err as Error).message);
    return [...DEFAULT_RESTRICTED_COUNTRIES];
  }
}

/**
 * `PURSER_SEALING_KEYS` is `id:key` pairs, comma-separated, newest first; `PURSER_SEALING_KEY`, a
 * single key, joins the ring last as `default` (how a deployment of before the keyring rotates:
 * add a new key to PURSER_SEALING_KEYS and keep the old one where it is until the re-seal job ran).
 * A key is 32 bytes as 64 hex characters or base64. Never echoes key material.
 */
export function parseSealingKeys(
  ring: string | undefined,
  single: string | undefined,
  problems: string[],
): Array<{ id: string; key: string }> {
  const keys: Array<{ id: string; key: string }> = [];
  for (const [i, entry] of (ring ?? '').split(',').entries()) {
    if (entry.trim() === '') continue;
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon).trim();
    const key = colon < 0 ? '' : entry.slice(colon + 1).trim();
    if (!SEALING_KEY_ID_PATTERN.test(id)) {
      problems.push(
        `PURSER_SEALING_KEYS entry ${i + 1} must be <id>:<key> with an id of 1 to 32 letters, digits, _ or -`,
      );
    } else if (parseKeyMaterial(key) === null) {
      problems.push(`PURSER_SEALING_KEYS key "${id}" must be 32 bytes, as 64 hex characters or base64`);
    } else if (id === PUBLIC_DEV_KEY_ID || keys.some((k) => k.id === id)) {
      problems.push(`PURSER_SEALING_KEYS key id "${id}" is reserved or used twice`);
    } else {
      keys.push({ id, key });
    }
  }
  if (single !== undefined) {
    if (parseKeyMaterial(single) === null) {
      problems.push('PURSER_SEALING_KEY must be 32 bytes, as 64 hex characters or base64');
    } else if (keys.some((k) => k.id === 'default')) {
      problems.push('PURSER_SEALING_KEYS cannot name a key "default" while PURSER_SEALING_KEY is set');
    } else {
      keys.push({ id: 'default', key: single });
    }
  }
  return keys;
}

/** A development config for tests: embedded database, no devnet, quiet logs. */
/** A JSON object's entries, or why the text is not one ("not JSON", "not an object"). */
export function jsonObjectEntries(raw: string): [string, unknown][] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return 'not JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'not an object';
  return Object.entries(parsed as Record<string, unknown>);
}

/** `PURSER_FAULT_REBALANCE_CRASH`: where a development process kills itself (crash tests). */
/**
 * `CHAIN_WATCH_CONFIRMATIONS`: `<chain id>:<blocks>,…` over the defaults (Base 12, Polygon 32; every
 * chain 0 on the devnet, whose blocks are final when mined).
 */
export function confirmationDepths(
  raw: string | undefined,
  devnet: boolean,
  problems: string[],
): Record<number, number> {
  const out: Record<number, number> = devnet
    ? Object.fromEntries(SUPPORTED_CHAINS.map((c) => [c, 0]))
    : { ...DEFAULT_CONFIRMATIONS };
  for (const part of (raw ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')) {
    const m = /^(\d+):(\d+)$/.exec(part);
    if (!m || !SUPPORTED_CHAINS.includes(Number(m[1])) || Number(m[2]) > 10_000) {
      problems.push(
        `CHAIN_WATCH_CONFIRMATIONS must be <chain id>:<blocks> pairs (chains ${SUPPORTED_CHAINS.join(', ')}, at most 10000 blocks; got "${part}")`,
      );
      continue;
    }
    out[Number(m[1])] = Number(m[2]);
  }
  return out;
}

export function faultCrash(raw: string | undefined, problems: string[]): CctpConfig['faultCrash'] {
  if (raw === undefined || raw === '') return null;
  if (raw === 'after_burn_broadcast' || raw === 'after_attestation' || raw === 'after_mint_broadcast')
    return raw;
  problems.push(
    'PURSER_FAULT_REBALANCE_CRASH must be after_burn_broadcast, after_attestation or after_mint_broadcast',
  );
  return null;
}

/**
 * `CCTP_CONTRACTS`: a JSON object of chain id → `{"domain", "token_messenger",
 * "message_transmitter"}`, replacing the defaults (Circle's V2 contracts on Base and Polygon).
 */
export function parseCctpContracts(raw: string | undefined, problems: string[]): Record<number, CctpChain> {
  const defaults: Record<number, CctpChain> = {};
  for (const [chain, domain] of Object.entries(CCTP_DOMAINS)) {
    defaults[Number(chain)] = { domain, ...CIRCLE_CCTP_V2 };
  }
  if (raw === undefined) return defaults;
  const fail = (why: string) => {
    problems.push(
      `CCTP_CONTRACTS must be a JSON object of chain id → {"domain", "token_messenger", "message_transmitter"}: ${why}`,
    );
    return defaults;
  };
  const entries = jsonObjectEntries(raw);
  if (typeof entries === 'string') return fail(entries);
  const chains: Record<number, CctpChain> = {};
  const address = /^0x[0-9a-fA-F]{40}$/;
  for (const [chain, entry] of entries) {
    const chainId = Number(chain);
    if (!SUPPORTED_CHAINS.includes(chainId)) return fail(`${chain} is not a supported chain id`);
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      return fail(`chain ${chain} must be an object`);
    }
    const e = entry as Record<string, unknown>;
    const unknown = Object.keys(e).filter(
      (k) => !['domain', 'token_messenger', 'message_transmitter'].includes(k),
    );
    if (unknown.length > 0) return fail(`chain ${chain} has unknown fields ${unknown.join(', ')}`);
    if (
      typeof e.domain !== 'number' ||
      !Number.isInteger(e.domain) ||
      e.domain < 0 ||
      e.domain > 0xffffffff
    ) {
      return fail(`chain ${chain} needs "domain", a CCTP domain id`);
    }
    if (typeof e.token_messenger !== 'string' || !address.test(e.token_messenger)) {
      return fail(`chain ${chain} needs "token_messenger", an address`);
    }
    if (typeof e.message_transmitter !== 'string' || !address.test(e.message_transmitter)) {
      return fail(`chain ${chain} needs "message_transmitter", an address`);
    }
    chains[chainId] = {
      domain: e.domain,
      tokenMessenger: e.token_messenger as `0x${string}`,
      messageTransmitter: e.message_transmitter as `0x${string}`,
    };
  }
  return chains;
}
