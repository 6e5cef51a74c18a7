// Sanctions screening of wallet addresses against the stored OFAC SDN digital-currency addresses
// and any further providers, and the sync that replaces the stored list.

import { readFile } from 'node:fs/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { PurserEnv } from '../../config.ts';
import type { Clock } from '../../core/clock.ts';
import { withTransaction, type Db } from '../../core/db/database.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { normalizeListedAddress, sdnListProvider, SDN_LIST, type ScreeningProvider } from './provider.ts';
import { parseSdnXml, SdnFormatError, type SdnDocument, type XmlSource } from './sdn-xml.ts';
import { getList, lockList, replaceList, type ListedAddress } from './store.ts';
import { pathToFileURL } from 'node:url';
import { projectPath } from '../../core/paths.ts';

export type ScreeningLogger = Pick<FastifyBaseLogger, 'info' | 'warn'>;

/** The bundled sample list that a development database starts with. */
export const SDN_FIXTURE_URL = pathToFileURL(projectPath('src/modules/screening/fixtures/sdn-sample.xml'));
const FIXTURE_SOURCE = 'fixture:sdn-sample.xml';

export interface ScreeningResult {
  /** As submitted. */
  address: string;
  sanctioned: boolean;
  /** The lists naming the address (`OFAC SDN`, …), sorted; empty when none does. */
  lists: string[];
  /** How many providers were consulted: the SDN list plus any configured extra ones. */
  providerCount: number;
}

export interface ScreenAddressParameters {
  db: Db;
  env: PurserEnv;
  clock: Clock;
  log: ScreeningLogger;
  /** Providers beside the stored SDN list. */
  extraProviders?: readonly ScreeningProvider[];
  deadline?: Deadline;
}

/**
 * Screens one EVM address against every provider; it is sanctioned when any provider lists it.
 * In development, a database whose SDN list was never loaded is first seeded from the bundled
 * fixture. Throws UNAVAILABLE (from a provider) when any provider cannot answer: screening
 * fails closed rather than report an unchecked address as clean.
 */
export async function screenAddress(
  params: ScreenAddressParameters,
  address: `0x${string}`,
): Promise<ScreeningResult> {
  // In development an empty database is seeded from the fixture on first use, not checked on every call.
  const seed = params.env === 'development' ? () => seedSdnFixture(params) : undefined;
  const providers = [sdnListProvider(params.db, seed), ...(params.extraProviders ?? [])];
  const options = params.deadline ? { deadline: params.deadline } : {};
  const answers = await Promise.all(providers.map((p) => p.screen(address, options)));
  const lists = [...new Set(answers.flat())].sort();
  return { address, sanctioned: lists.length > 0, lists, providerCount: providers.length };
}

export interface SyncSdnListParameters {
  db: Db;
  clock: Clock;
  log: ScreeningLogger;
  /** Returns the SDN XML: the whole text, or its chunks as they arrive (see `downloadSdnXml`). */
  fetchXml: () => Promise<XmlSource>;
  /** Recorded as the list's source, such as the download URL. */
  source?: string;
}

export interface SyncSdnListResult {
  list: string;
  publishDate: string | null;
  entryCount: number;
  /** Distinct (address, asset) pairs now stored. */
  addressCount: number;
  previousAddressCount: number;
  source: string;
}

/**
 * `purser screening sync`: downloads SDN.XML, parses it and replaces the stored address set in
 * one transaction, so a screening sees either the old set or the new one, never a mix.
 * Throws XmlSyntaxError or SdnFormatError (nothing stored) when the file is malformed,
 * truncated, or holds no digital-currency address at all.
 */
export async function syncSdnList(params: SyncSdnListParameters): Promise<SyncSdnListResult> {
  const document = await parseSdnXml(await params.fetchXml());
  const result = await storeSdnDocument(params, document, params.source ?? 'SDN.XML', false);
  // Only an "only if absent" store returns null.
  if (!result) throw new Error('SDN list was not stored');
  return result;
}

export interface SeedSdnFixtureParameters {
  db: Db;
  clock: Clock;
  log: ScreeningLogger;
}

/**
 * Development only: loads the bundled sample list when no SDN list was ever stored. Returns the
 * stored result, or null when a list was already there (a real sync is never overwritten).
 */
export async function seedSdnFixture(params: SeedSdnFixtureParameters): Promise<SyncSdnListResult | null> {
  if (await getList(params.db, SDN_LIST)) return null;
  const document = await parseSdnXml(await readFile(SDN_FIXTURE_URL, 'utf8'));
  const result = await storeSdnDocument(params, document, FIXTURE_SOURCE, true);
  if (result)
    params.log.info(
      { addresses: result.addressCount },
      'seeded the OFAC SDN list from the development fixture',
    );
  return result;
}

async function storeSdnDocument(
  params: { db: Db; clock: Clock; log: ScreeningLogger },
  document: SdnDocument,
  source: string,
  onlyIfAbsent: boolean,
): Promise<SyncSdnListResult | null> {
  const addresses = distinctAddresses(document);
  if (addresses.length === 0) {
    throw new SdnFormatError(
      `The list (${document.entryCount} entries) holds no digital-currency address; the stored set is kept. ` +
        'Has the file format changed?',
    );
  }
  const result = await withTransaction(params.db, async (tx) => {
    await lockList(tx, SDN_LIST);
    const previous = await getList(tx, SDN_LIST);
    if (previous && onlyIfAbsent) return null;
    if (previous?.publishDate && document.publishDate && document.publishDate < previous.publishDate) {
      params.log.warn(
        { stored: previous.publishDate, incoming: document.publishDate },
        'the SDN list being stored is older than the stored one',
      );
    }
    await replaceList(tx, {
      list: SDN_LIST,
      publishDate: document.publishDate,
      recordCount: document.recordCount,
      source,
      syncedAt: params.clock.now(),
      addresses,
    });
    return {
      list: SDN_LIST,
      publishDate: document.publishDate,
      entryCount: document.entryCount,
      addressCount: addresses.length,
      previousAddressCount: previous?.addressCount ?? 0,
      source,
    };
  });
  if (result) params.log.info(result, 'stored the OFAC SDN list');
  return result;
}

/** Normalized and without repeats: one row per (address, asset), the first entry naming it. */
function distinctAddresses(document: SdnDocument): ListedAddress[] {
  const seen = new Set<string>();
  const out: ListedAddress[] = [];
  for (const a of document.addresses) {
    const address = normalizeListedAddress(a.address);
    const key = `${address}\u0000${a.asset}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ address, asset: a.asset, entryUid: a.entryUid });
  }
  return out;
}

export interface DownloadSdnXmlOptions {
  /** Bound on the whole download; default two minutes. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** The real source: streams the official SDN.XML (config `screening.sdnUrl`) chunk by chunk. */
export async function* downloadSdnXml(
  url: string,
  options: DownloadSdnXmlOptions = {},
): AsyncIterable<Uint8Array> {
  const fetchImpl = options.fetch ?? fetch;
  const res = await fetchImpl(url, { signal: AbortSignal.timeout(options.timeoutMs ?? 120_000) });
  if (!res.ok || !res.body) throw new Error(`SDN download failed: HTTP ${res.status} from ${url}`);
  for await (const chunk of res.body) yield chunk;
}
