// A small MaxMind DB writer, so tests can build the GeoIP databases they read (none ships with
// the project). It follows the MaxMind DB File Format Specification 2.0:
//
//   [binary search tree][16 zero bytes][data section]["\xAB\xCD\xEFMaxMind.com"][metadata map]
//
// - The tree has `node_count` nodes of two records (left: bit 0, right: bit 1) of
//   `record_size` bits (24: 3+3 bytes; 28: 3 bytes, a shared middle byte whose high nibble tops
//   the left record and low nibble the right, 3 bytes; 32: 4+4 bytes). A record below node_count
//   is the next node, equal to node_count means "no data", above it points into the data section
//   at (record - node_count - 16).
// - An IPv6 tree (ip_version 6) holds IPv4 networks at ::a.b.c.d/96+n, where readers look for
//   them. An IPv4 tree (ip_version 4) is 32 levels deep.
// - Data fields start with a control byte: type in the top 3 bits (0 = extended: the next byte is
//   type - 7), size in the low 5 (29, 30, 31: the size continues in 1, 2, 3 more bytes, plus 29,
//   285, 65821). Used here: 2 utf8 string, 3 double, 5 uint16, 6 uint32, 7 map, 8 int32,
//   9 uint64, 11 array, 14 boolean (value in the size).
// Networks are inserted least specific first, so a more specific network overrides part of a
// wider one. Test support only: no pointers, no deduplication beyond identical records.

import { writeFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import { parseAddress } from '../../src/adapters/geo/addresses.ts';

/** A value of a typed MaxMind field, where the type matters (metadata). */
export interface Typed {
  readonly mmdbType: 'uint16' | 'uint32' | 'uint64' | 'int32' | 'double';
  readonly value: number | bigint;
}

export type MmdbValue =
  string | number | bigint | boolean | Typed | MmdbValue[] | { [key: string]: MmdbValue };

export const uint16 = (value: number): Typed => ({ mmdbType: 'uint16', value });
export const uint32 = (value: number): Typed => ({ mmdbType: 'uint32', value });
export const uint64 = (value: number | bigint): Typed => ({ mmdbType: 'uint64', value });
export const double = (value: number): Typed => ({ mmdbType: 'double', value });

export interface MmdbNetwork {
  /** `203.0.113.0/24`, `2001:db8::/32`, or a single address. */
  network: string;
  data: { [key: string]: MmdbValue };
}

export interface MmdbOptions {
  ipVersion?: 4 | 6;
  recordSize?: 24 | 28 | 32;
  databaseType?: string;
  languages?: string[];
  description?: Record<string, string>;
  /** Seconds since the epoch. */
  buildEpoch?: number;
}

function isTyped(value: unknown): value is Typed {
  return typeof value === 'object' && value !== null && 'mmdbType' in value;
}

function unsignedBytes(value: bigint): number[] {
  const out: number[] = [];
  for (let v = value; v > 0n; v >>= 8n) out.unshift(Number(v & 0xffn));
  return out;
}

function control(type: number, size: number): number[] {
  let sizeBits: number;
  let sizeBytes: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 29 + 256) {
    sizeBits = 29;
    sizeBytes = [size - 29];
  } else if (size < 285 + 65_536) {
    sizeBits = 30;
    const rest = size - 285;
    sizeBytes = [rest >> 8, rest & 0xff];
  } else {
    sizeBits = 31;
    const rest = size - 65_821;
    sizeBytes = [(rest >> 16) & 0xff, (rest >> 8) & 0xff, rest & 0xff];
  }
  if (type <= 7) return [(type << 5) | sizeBits, ...sizeBytes];
  return [sizeBits, type - 7, ...sizeBytes];
}

/** One value in the data-section encoding. */
export function encodeValue(value: MmdbValue): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([Buffer.from(control(2, bytes.length)), bytes]);
  }
  if (typeof value === 'boolean') return Buffer.from(control(14, value ? 1 : 0));
  if (typeof value === 'bigint') return encodeValue(uint64(value));
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 0 && value < 2 ** 32) return encodeValue(uint32(value));
    if (Number.isInteger(value) && value < 0 && value >= -(2 ** 31)) {
      return encodeValue({ mmdbType: 'int32', value });
    }
    return encodeValue(double(value));
  }
  if (isTyped(value)) {
    switch (value.mmdbType) {
      case 'double': {
        const b = Buffer.alloc(8);
        b.writeDoubleBE(Number(value.value));
        return Buffer.concat([Buffer.from(control(3, 8)), b]);
      }
      case 'int32': {
        const b = Buffer.alloc(4);
        b.writeInt32BE(Number(value.value));
        return Buffer.concat([Buffer.from(control(8, 4)), b]);
      }
      default: {
        const type = { uint16: 5, uint32: 6, uint64: 9 }[value.mmdbType];
        const max = { uint16: 2n ** 16n, uint32: 2n ** 32n, uint64: 2n ** 64n }[value.mmdbType];
        const v = BigInt(value.value);
        if (v < 0n || v >= max) throw new Error(`${value.mmdbType} out of range: ${v}`);
        const bytes = unsignedBytes(v);
        return Buffer.from([...control(type, bytes.length), ...bytes]);
      }
    }
  }
  if (Array.isArray(value)) {
    return Buffer.concat([Buffer.from(control(11, value.length)), ...value.map(encodeValue)]);
  }
  const entries = Object.entries(value);
  return Buffer.concat([
    Buffer.from(control(7, entries.length)),
    ...entries.flatMap(([k, v]) => [encodeValue(k), encodeValue(v)]),
  ]);
}

type TreeRecord = { kind: 'empty' } | { kind: 'node'; node: number } | { kind: 'data'; offset: number };

function networkBits(network: string, ipVersion: 4 | 6): { bits: number[]; prefix: number } {
  const [address = '', prefixText] = network.split('/');
  const parsed = parseAddress(address);
  if (!parsed) throw new Error(`not a network: ${network}`);
  const v4 = isIPv4(address);
  const max = v4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) throw new Error(`bad prefix: ${network}`);
  const all: number[] = [];
  for (const byte of parsed.bytes) for (let i = 7; i >= 0; i--) all.push((byte >> i) & 1);
  if (ipVersion === 4) {
    if (!v4) throw new Error(`an IPv4 database cannot hold ${network}`);
    return { bits: all.slice(96), prefix };
  }
  // IPv4 lives at ::a.b.c.d/96+n in an IPv6 tree (the mapped prefix ::ffff:0:0/96 is not used).
  if (v4) return { bits: [...Array<number>(96).fill(0), ...all.slice(96)], prefix: prefix + 96 };
  return { bits: all, prefix };
}

/** The database file's bytes. */
export function buildMmdb(networks: MmdbNetwork[], options: MmdbOptions = {}): Buffer {
  const ipVersion = options.ipVersion ?? 6;
  const recordSize = options.recordSize ?? 28;

  // Data section: each distinct record once.
  const dataChunks: Buffer[] = [];
  const offsets = new Map<string, number>();
  let dataSize = 0;
  const dataOffset = (data: MmdbNetwork['data']): number => {
    const encoded = encodeValue(data);
    const key = encoded.toString('hex');
    let at = offsets.get(key);
    if (at === undefined) {
      at = dataSize;
      offsets.set(key, at);
      dataChunks.push(encoded);
      dataSize += encoded.length;
    }
    return at;
  };

  // The tree, least specific networks first.
  const nodes: [TreeRecord, TreeRecord][] = [[{ kind: 'empty' }, { kind: 'empty' }]];
  const sorted = networks
    .map((n) => ({ ...networkBits(n.network, ipVersion), data: n.data }))
    .sort((a, b) => a.prefix - b.prefix);
  for (const { bits, prefix, data } of sorted) {
    if (prefix === 0) throw new Error('a /0 network is not supported');
    const leaf: TreeRecord = { kind: 'data', offset: dataOffset(data) };
    let node = 0;
    for (let depth = 0; depth < prefix - 1; depth++) {
      const bit = bits[depth] as 0 | 1;
      const current = nodes[node]![bit];
      if (current.kind === 'node') {
        node = current.node;
        continue;
      }
      // Split an empty or data record into a node whose two halves keep what it held.
      nodes.push([current, current]);
      const next = nodes.length - 1;
      nodes[node]![bit] = { kind: 'node', node: next };
      node = next;
    }
    nodes[node]![bits[prefix - 1] as 0 | 1] = leaf;
  }

  const nodeCount = nodes.length;
  const value = (r: TreeRecord): number =>
    r.kind === 'empty' ? nodeCount : r.kind === 'node' ? r.node : nodeCount + 16 + r.offset;
  const maxValue = 2 ** recordSize - 1;
  if (nodeCount + 16 + dataSize > maxValue) throw new Error(`${recordSize}-bit records are too small`);

  const nodeBytes = recordSize / 4;
  const tree = Buffer.alloc(nodeCount * nodeBytes);
  nodes.forEach(([left, right], i) => {
    const l = value(left);
    const r = value(right);
    const at = i * nodeBytes;
    if (recordSize === 24) {
      tree.writeUIntBE(l, at, 3);
      tree.writeUIntBE(r, at + 3, 3);
    } else if (recordSize === 28) {
      tree.writeUIntBE(l & 0xffffff, at, 3);
      tree[at + 3] = (((l >>> 24) & 0x0f) << 4) | ((r >>> 24) & 0x0f);
      tree.writeUIntBE(r & 0xffffff, at + 4, 3);
    } else {
      tree.writeUInt32BE(l, at);
      tree.writeUInt32BE(r, at + 4);
    }
  });

  const metadata = encodeValue({
    node_count: uint32(nodeCount),
    record_size: uint16(recordSize),
    ip_version: uint16(ipVersion),
    database_type: options.databaseType ?? 'GeoLite2-Country',
    languages: options.languages ?? ['en'],
    binary_format_major_version: uint16(2),
    binary_format_minor_version: uint16(0),
    build_epoch: uint64(options.buildEpoch ?? 1_700_000_000),
    description: options.description ?? { en: 'Purser test database' },
  });
  const marker = Buffer.concat([Buffer.from([0xab, 0xcd, 0xef]), Buffer.from('MaxMind.com', 'ascii')]);
  return Buffer.concat([tree, Buffer.alloc(16), ...dataChunks, marker, metadata]);
}

/** Builds the database and writes it to `path`. */
export function writeMmdb(path: string, networks: MmdbNetwork[], options: MmdbOptions = {}): string {
  writeFileSync(path, buildMmdb(networks, options));
  return path;
}

/** A GeoIP2 Country record for `iso` (registered in `registered`, default the same). */
export function countryRecord(iso: string | null, registered: string | null = iso): MmdbNetwork['data'] {
  const names = (code: string) => ({ en: `Country ${code}` });
  return {
    continent: { code: 'EU', geoname_id: uint32(6255148), names: { en: 'Europe' } },
    ...(iso === null ? {} : { country: { geoname_id: uint32(1), iso_code: iso, names: names(iso) } }),
    ...(registered === null
      ? {}
      : { registered_country: { geoname_id: uint32(2), iso_code: registered, names: names(registered) } }),
  };
}

/** A GeoIP2 City record: the Country layout plus city, location, postal and subdivisions. */
export function cityRecord(iso: string | null, registered: string | null = iso): MmdbNetwork['data'] {
  return {
    ...countryRecord(iso, registered),
    city: { geoname_id: uint32(2988507), names: { en: 'Some City' } },
    location: {
      accuracy_radius: uint16(20),
      latitude: double(48.8534),
      longitude: double(2.3488),
      time_zone: 'Europe/Paris',
    },
    postal: { code: '75001' },
    subdivisions: [{ geoname_id: uint32(3012874), iso_code: 'IDF', names: { en: 'Île-de-France' } }],
  };
}
