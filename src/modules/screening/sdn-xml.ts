// Reads OFAC's SDN.XML: its publication facts and every digital-currency address of its entries.
//
//   <sdnList xmlns="…/exports/XML">
//     <publshInformation><Publish_Date>MM/DD/YYYY</Publish_Date><Record_Count>n</Record_Count></publshInformation>
//     <sdnEntry><uid>…</uid> … <idList><id><uid>…</uid>
//       <idType>Digital Currency Address - XBT</idType><idNumber>…</idNumber></id> …</idList></sdnEntry>
//   </sdnList>
//
// Every idType starting with "Digital Currency Address - " is an address; the suffix names the
// asset (XBT, ETH, USDT, TRX…). Fed chunk by chunk, the parser keeps only the addresses, so the
// whole list never has to sit in memory as text.

import { XmlScanner, type XmlEvents } from './xml-scanner.ts';

export const DIGITAL_CURRENCY_ID_PREFIX = 'Digital Currency Address - ';

export interface SdnAddress {
  /** As published (trimmed). */
  address: string;
  /** The idType suffix: `XBT`, `ETH`, `USDT`… */
  asset: string;
  /** The `uid` of the sdnEntry naming it. */
  entryUid: string | null;
}

export interface SdnDocument {
  /** `Publish_Date` as an ISO date (YYYY-MM-DD), or null when the file has none. */
  publishDate: string | null;
  /** `Record_Count`: the number of entries the file declares, or null when absent. */
  recordCount: number | null;
  /** The number of sdnEntry elements read. */
  entryCount: number;
  addresses: SdnAddress[];
}

/** The file is well-formed XML but not a complete SDN list. */
export class SdnFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SdnFormatError';
  }
}

export type XmlSource =
  string | Uint8Array | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

/**
 * Parses a whole SDN.XML from a string or from chunks (a response body). Throws XmlSyntaxError
 * for malformed or truncated XML and SdnFormatError when the document is not a complete SDN list
 * (wrong root, bad publication facts, fewer entries than `Record_Count` declares).
 */
export async function parseSdnXml(source: XmlSource): Promise<SdnDocument> {
  const parser = new SdnXmlParser();
  if (typeof source === 'string' || source instanceof Uint8Array) {
    parser.write(source);
  } else if (Symbol.asyncIterator in source) {
    for await (const chunk of source) parser.write(chunk);
  } else {
    for (const chunk of source) parser.write(chunk);
  }
  return parser.end();
}

/** The incremental form: `write` chunks as they arrive, then `end` for the document. */
export class SdnXmlParser {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private readonly scanner: XmlScanner;
  private readonly path: string[] = [];
  private capture: string | null = null;
  private publishDateText: string | null = null;
  private recordCountText: string | null = null;
  private entryCount = 0;
  private entry: { uid: string | null; found: { address: string; asset: string }[] } | null = null;
  private id: { type: string; number: string } | null = null;
  private readonly addresses: SdnAddress[] = [];

  constructor() {
    const events: XmlEvents = {
      open: (name) => this.open(name),
      close: (name) => this.close(name),
      text: (text) => {
        if (this.capture !== null) this.capture += text;
      },
    };
    this.scanner = new XmlScanner(events);
  }

  write(chunk: string | Uint8Array): void {
    this.scanner.write(typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true }));
  }

  end(): SdnDocument {
    this.scanner.write(this.decoder.decode());
    this.scanner.end();
    const recordCount = this.recordCountText === null ? null : parseCount(this.recordCountText);
    if (recordCount !== null && recordCount !== this.entryCount) {
      throw new SdnFormatError(
        `The list declares ${recordCount} entries but holds ${this.entryCount}: the download is incomplete or corrupt.`,
      );
    }
    return {
      publishDate: this.publishDateText === null ? null : parsePublishDate(this.publishDateText),
      recordCount,
      entryCount: this.entryCount,
      addresses: this.addresses,
    };
  }

  private open(name: string): void {
    const path = this.path;
    path.push(name);
    const depth = path.length;
    if (depth === 1) {
      if (name !== 'sdnList') throw new SdnFormatError(`The root element is <${name}>, not <sdnList>.`);
      return;
    }
    const section = path[1];
    if (depth === 2 && name === 'sdnEntry') {
      this.entryCount++;
      this.entry = { uid: null, found: [] };
    } else if (depth === 3 && section === 'publshInformation') {
      if (name === 'Publish_Date' || name === 'Record_Count') this.capture = '';
    } else if (section === 'sdnEntry' && this.entry) {
      if (depth === 3 && name === 'uid') this.capture = '';
      else if (depth === 4 && path[2] === 'idList' && name === 'id') this.id = { type: '', number: '' };
      else if (depth === 5 && this.id && (name === 'idType' || name === 'idNumber')) this.capture = '';
    }
  }

  private close(name: string): void {
    const path = this.path;
    const depth = path.length;
    const section = path[1];
    const text = this.capture;
    this.capture = null;
    if (depth === 3 && section === 'publshInformation' && text !== null) {
      if (name === 'Publish_Date') this.publishDateText = text.trim();
      else this.recordCountText = text.trim();
    } else if (section === 'sdnEntry' && this.entry) {
      if (depth === 3 && name === 'uid' && text !== null) {
        this.entry.uid = text.trim();
      } else if (depth === 5 && this.id && text !== null) {
        if (name === 'idType') this.id.type = text.trim();
        else this.id.number = text.trim();
      } else if (depth === 4 && name === 'id' && this.id) {
        const { type, number } = this.id;
        if (type.startsWith(DIGITAL_CURRENCY_ID_PREFIX) && number !== '') {
          this.entry.found.push({
            address: number,
            asset: type.slice(DIGITAL_CURRENCY_ID_PREFIX.length).trim(),
          });
        }
        this.id = null;
      } else if (depth === 2) {
        // The uid may come before or after the idList: attach it when the entry closes.
        const uid = this.entry.uid;
        for (const f of this.entry.found) this.addresses.push({ ...f, entryUid: uid });
        this.entry = null;
      }
    }
    path.pop();
  }
}

function parseCount(text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new SdnFormatError(`Record_Count "${text}" is not a count.`);
  return Number(text);
}

/** OFAC writes MM/DD/YYYY; an ISO date is accepted too. */
function parsePublishDate(text: string): string {
  const us = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(text);
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const [year, month, day] = us ? [us[3], us[1], us[2]] : iso ? [iso[1], iso[2], iso[3]] : [];
  if (year !== undefined && month !== undefined && day !== undefined) {
    const date = `${year}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
    const parsed = new Date(`${date}T00:00:00Z`);
    if (!Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(date)) return date;
  }
  throw new SdnFormatError(`Publish_Date "${text}" is not a date (expected MM/DD/YYYY).`);
}
