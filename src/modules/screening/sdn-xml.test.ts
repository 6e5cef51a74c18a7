// Reading SDN.XML: the bundled fixture, chunked input, damaged files, and generated lists.

import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSdnXml, SdnFormatError, type SdnAddress } from './sdn-xml.ts';
import { XmlScanner, XmlSyntaxError } from './xml-scanner.ts';

const FIXTURE = readFileSync(new URL('./fixtures/sdn-sample.xml', import.meta.url), 'utf8');

const FIXTURE_ADDRESSES: SdnAddress[] = [
  { address: '193XcBCxcRJ94V7WU9ve5KQ7E4DLSxyK23', asset: 'XBT', entryUid: '90002' },
  { address: '0xcbB2f6E7E0aD70BdaB8Fd391a8419D2AE866d342', asset: 'ETH', entryUid: '90002' },
  { address: '0x7987FFfd095501F3A5D57eca0dfdC19EF1157eAb', asset: 'ETH', entryUid: '90002' },
  { address: '0xBF7f4bb976F5f5369Fe03C550906DF7C2662B5E7', asset: 'ETH', entryUid: '90003' },
  { address: '0xBF7f4bb976F5f5369Fe03C550906DF7C2662B5E7', asset: 'USDT', entryUid: '90003' },
  { address: 'TypkPBybKPvbE6anXiRqSVqeFDGxRMhcwy', asset: 'TRX', entryUid: '90003' },
  {
    address:
      '43tuu7YC112JHt63Qsijs5knQUP8JaBSHDPWVDJWxZbdDauEQU8qV8CJL2bEe6RR326LvfsahX3dXt2Si9QBndYhuaUu3pF',
    asset: 'XMR',
    entryUid: '90003',
  },
  { address: '0xe429c70ff681b441e6131f8d6fde93d5352eef72', asset: 'ETH', entryUid: '90004' },
];

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

describe('parseSdnXml on the bundled fixture', () => {
  it('reads the publication facts and every digital-currency address with its asset and entry', async () => {
    const doc = await parseSdnXml(FIXTURE);
    expect(doc.publishDate).toBe('2026-03-14');
    expect(doc.recordCount).toBe(5);
    expect(doc.entryCount).toBe(5);
    expect(doc.addresses).toEqual(FIXTURE_ADDRESSES);
  });

  it('gives the same answer however the text is cut into chunks, as text or as bytes', async () => {
    const whole = await parseSdnXml(FIXTURE);
    for (const size of [1, 2, 3, 7, 64, 1000]) {
      expect(await parseSdnXml(chunks(FIXTURE, size))).toEqual(whole);
    }
    // Bytes cut inside a multi-byte character.
    const bytes = new TextEncoder().encode(FIXTURE.replace('Jane', 'Jäné'));
    const byteChunks = async function* () {
      for (let i = 0; i < bytes.length; i += 5) yield bytes.subarray(i, i + 5);
    };
    expect(await parseSdnXml(byteChunks())).toEqual(whole);
  });
});

describe('parseSdnXml on damaged or foreign files', () => {
  it('refuses a truncated download', async () => {
    const cut = FIXTURE.slice(0, FIXTURE.indexOf('<uid>90004</uid>'));
    await expect(parseSdnXml(cut)).rejects.toThrow(XmlSyntaxError);
    await expect(parseSdnXml(FIXTURE.slice(0, -3))).rejects.toThrow(/ends inside a tag|truncated/);
  });

  it('refuses a file that holds fewer entries than Record_Count declares', async () => {
    const fewer = FIXTURE.replace('<Record_Count>5</Record_Count>', '<Record_Count>6</Record_Count>');
    await expect(parseSdnXml(fewer)).rejects.toThrow(SdnFormatError);
    await expect(parseSdnXml(fewer)).rejects.toThrow(/declares 6 entries but holds 5/);
  });

  it('refuses another root element, a bad date and a bad count', async () => {
    await expect(parseSdnXml('<consolidatedList></consolidatedList>')).rejects.toThrow(/not <sdnList>/);
    await expect(parseSdnXml(FIXTURE.replace('03/14/2026', '14.03.2026'))).rejects.toThrow(/Publish_Date/);
    await expect(parseSdnXml(FIXTURE.replace('03/14/2026', '02/30/2026'))).rejects.toThrow(/Publish_Date/);
    await expect(parseSdnXml(FIXTURE.replace('<Record_Count>5<', '<Record_Count>five<'))).rejects.toThrow(
      /Record_Count/,
    );
  });

  it('refuses DOCTYPE declarations, so no entity is ever expanded', async () => {
    const bomb = FIXTURE.replace(
      '<sdnList ',
      '<!DOCTYPE sdnList [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>\n<sdnList ',
    );
    await expect(parseSdnXml(bomb)).rejects.toThrow(/declarations .* are refused/);
    await expect(parseSdnXml(FIXTURE.replace('SAMPLE MIXER', 'SAMPLE &xxe; MIXER'))).rejects.toThrow(
      /unknown entity/,
    );
  });

  it('refuses tags that do not nest and content after the root', async () => {
    await expect(parseSdnXml(FIXTURE.replace('</firstName>', '</lastName>'))).rejects.toThrow(
      /closes <firstName>/,
    );
    await expect(parseSdnXml(`${FIXTURE}<sdnList></sdnList>`)).rejects.toThrow(/after the root element/);
  });
});

describe('XmlScanner', () => {
  it('decodes entities, character references and CDATA, skips attributes, comments and prefixes', () => {
    const seen: string[] = [];
    const scanner = new XmlScanner({
      open: (n) => seen.push(`<${n}>`),
      close: (n) => seen.push(`</${n}>`),
      text: (t) => seen.push(t),
    });
    scanner.write('<?xml version="1.0"?><!-- c --><x:a b="1>2" c=\'q\'>A &amp; B &#65;&#x42;');
    scanner.write('<![CDATA[<raw & text>]]><e/></x:a>');
    scanner.end();
    expect(seen).toEqual(['<a>', 'A & B AB', '<raw & text>', '<e>', '</e>', '</a>']);
  });
});

// Generated lists: whatever the entries, ids and chunking, the parser returns exactly the
// digital-currency ids, each with its asset and entry uid, and nothing else.
describe('parseSdnXml on generated lists', () => {
  const xmlText = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '&', '<', '>', '"', "'", 'é', '-') });
  const asset = fc.constantFrom('XBT', 'ETH', 'USDT', 'TRX', 'XMR', 'BSC', 'ARB');
  const address = fc.oneof(
    fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
    fc.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{26,40}$/),
  );
  const id = fc.oneof(
    fc.record({ digital: fc.constant(true as const), asset, number: address }),
    fc.record({
      digital: fc.constant(false as const),
      type: fc.constantFrom('Passport', 'Website', 'Digital Currency'),
      number: xmlText,
    }),
  );
  const entry = fc.record({
    uid: fc.integer({ min: 1, max: 99_999_999 }).map(String),
    name: xmlText,
    ids: fc.array(id, { maxLength: 5 }),
  });

  const escape = (s: string) =>
    s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

  it('returns exactly the digital-currency ids of any list, however it is chunked', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(entry, { maxLength: 8 }),
        fc.integer({ min: 1, max: 97 }),
        async (entries, size) => {
          const body = entries
            .map(
              (e) =>
                `<sdnEntry><uid>${e.uid}</uid><lastName>${escape(e.name)}</lastName><sdnType>Entity</sdnType>` +
                `<idList>${e.ids
                  .map(
                    (i, n) =>
                      `<id><uid>${n}</uid><idType>${i.digital ? `Digital Currency Address - ${i.asset}` : i.type}</idType>` +
                      `<idNumber>${escape(i.number)}</idNumber></id>`,
                  )
                  .join('')}</idList></sdnEntry>`,
            )
            .join('\n');
          const xml =
            `<?xml version="1.0" standalone="yes"?>\n<sdnList xmlns="https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/XML">` +
            `<publshInformation><Publish_Date>12/31/2025</Publish_Date><Record_Count>${entries.length}</Record_Count></publshInformation>` +
            `${body}</sdnList>`;
          const doc = await parseSdnXml(chunks(xml, size));
          const expected = entries.flatMap((e) =>
            e.ids.flatMap((i) => (i.digital ? [{ address: i.number, asset: i.asset, entryUid: e.uid }] : [])),
          );
          expect(doc.addresses).toEqual(expected);
          expect(doc.entryCount).toBe(entries.length);
          expect(doc.publishDate).toBe('2025-12-31');
        },
      ),
      { numRuns: 200 },
    );
  });
});
