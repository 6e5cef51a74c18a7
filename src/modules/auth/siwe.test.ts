// The SIWE builder and the strict parser, without HTTP: byte equality with viem and the `siwe`
// package for the same fields, and refusal of everything the ERC-4361 ABNF does not allow.

import { SiweMessage } from 'siwe';
import { createSiweMessage, parseSiweMessage as viemParse } from 'viem/siwe';
import { describe, expect, it } from 'vitest';
import {
  buildSiweMessage,
  challengeProblems,
  fieldProblems,
  parseDateTime,
  parseSiweMessage,
  SIWE_STATEMENT,
  timeProblems,
  type SiweFields,
} from './siwe.ts';

const address = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' as const;
const issuedAt = new Date('2026-03-01T12:00:00.000Z');
const expirationTime = new Date('2026-03-01T12:10:00.000Z');
const base = {
  domain: 'purser.test',
  address,
  uri: 'https://purser.test',
  chainId: 8453,
  nonce: 'abcDEF123456ghiJKL789012',
  issuedAt,
  expirationTime,
};

const parsed = (text: string): SiweFields => {
  const r = parseSiweMessage(text);
  if (!r.ok) throw new Error(r.reason);
  return r.fields;
};

describe('buildSiweMessage', () => {
  it('writes the same bytes as viem createSiweMessage and siwe prepareMessage', () => {
    for (const statement of [SIWE_STATEMENT, undefined]) {
      const ours = buildSiweMessage({ ...base, ...(statement ? { statement } : {}) });
      const viem = createSiweMessage({ ...base, version: '1', ...(statement ? { statement } : {}) });
      const siwe = new SiweMessage({
        ...base,
        version: '1',
        issuedAt: issuedAt.toISOString(),
        expirationTime: expirationTime.toISOString(),
        ...(statement ? { statement } : {}),
      }).prepareMessage();
      expect(ours).toBe(viem);
      expect(ours).toBe(siwe);
    }
  });

  it('lays the message out as the ABNF says: LF only, no trailing newline', () => {
    const text = buildSiweMessage({ ...base, statement: SIWE_STATEMENT });
    expect(text.split('\n').slice(0, 5)).toEqual([
      'purser.test wants you to sign in with your Ethereum account:',
      address,
      '',
      SIWE_STATEMENT,
      '',
    ]);
    expect(text.endsWith('\n')).toBe(false);
    expect(text).not.toContain('\r');
    expect(buildSiweMessage(base)).toContain(`${address}\n\n\nURI: https://purser.test\n`);
  });
});

describe('parseSiweMessage', () => {
  it('reads back every field, agreeing with viem parseSiweMessage', () => {
    const text = buildSiweMessage({ ...base, statement: SIWE_STATEMENT });
    const f = parsed(text);
    expect(f).toEqual({
      scheme: null,
      domain: 'purser.test',
      address,
      statement: SIWE_STATEMENT,
      uri: 'https://purser.test',
      version: '1',
      chainId: 8453,
      nonce: base.nonce,
      issuedAt,
      expirationTime,
      notBefore: null,
      requestId: null,
      resources: null,
    });
    const v = viemParse(text);
    expect([v.domain, v.address, v.uri, v.chainId, v.nonce, v.statement]).toEqual([
      f.domain,
      f.address,
      f.uri,
      f.chainId,
      f.nonce,
      f.statement,
    ]);
  });

  it('reads the optional fields: scheme, Not Before, Request ID, Resources', () => {
    const text = new SiweMessage({
      ...base,
      scheme: 'https',
      version: '1',
      issuedAt: issuedAt.toISOString(),
      expirationTime: expirationTime.toISOString(),
      notBefore: '2026-03-01T12:00:30+02:00',
      requestId: 'req-1',
      resources: ['https://purser.test/a', 'ipfs://bafy'],
    }).prepareMessage();
    const f = parsed(text);
    expect(f.scheme).toBe('https');
    expect(f.statement).toBeNull();
    expect(f.notBefore?.toISOString()).toBe('2026-03-01T10:00:30.000Z');
    expect(f.requestId).toBe('req-1');
    expect(f.resources).toEqual(['https://purser.test/a', 'ipfs://bafy']);
  });

  it('refuses whatever the ABNF does not allow', () => {
    const good = buildSiweMessage({ ...base, statement: SIWE_STATEMENT });
    const broken: Record<string, string> = {
      'trailing newline': `${good}\n`,
      CRLF: good.replace(/\n/g, '\r\n'),
      'one empty line without a statement': good.replace(`\n\n${SIWE_STATEMENT}\n\n`, '\n\n'),
      'no empty line after the statement': good.replace(`${SIWE_STATEMENT}\n\n`, `${SIWE_STATEMENT}\n`),
      'short address': good.replace(address, address.slice(0, 41)),
      'bad header': good.replace('wants you to sign in', 'wants to sign in'),
      'missing version': good.replace('Version: 1\n', ''),
      'fields out of order': good.replace('Version: 1\nChain ID: 8453', 'Chain ID: 8453\nVersion: 1'),
      'short nonce': good.replace(base.nonce, 'abc123'),
      'non-alphanumeric nonce': good.replace(base.nonce, `${base.nonce}-x`),
      'chain id not digits': good.replace('Chain ID: 8453', 'Chain ID: 0x2105'),
      'date without zone': good.replace('2026-03-01T12:00:00.000Z', '2026-03-01T12:00:00'),
      '30 February': good.replace('2026-03-01T12:00:00.000Z', '2026-02-30T12:00:00Z'),
      'hour 24': good.replace('2026-03-01T12:00:00.000Z', '2026-03-01T24:00:00Z'),
      'extra line at the end': `${good}\nHello: there`,
      'statement with a control character': good.replace(SIWE_STATEMENT, 'Sign\tin'),
      'space in the domain': good.replace('purser.test wants', 'purser test wants'),
      empty: '',
    };
    for (const [what, text] of Object.entries(broken)) {
      expect(parseSiweMessage(text).ok, what).toBe(false);
    }
  });

  it('parseDateTime takes RFC 3339 instants only', () => {
    expect(parseDateTime('2026-03-01T12:00:00Z')?.toISOString()).toBe('2026-03-01T12:00:00.000Z');
    expect(parseDateTime('2026-03-01T12:00:00.123456-05:30')?.toISOString()).toBe('2026-03-01T17:30:00.123Z');
    for (const bad of [
      '2026-03-01',
      '2026-13-01T00:00:00Z',
      '2026-03-01T12:00:60Z',
      '2026-03-01T12:00:00+24:00',
    ]) {
      expect(parseDateTime(bad), bad).toBeNull();
    }
  });
});

describe('fieldProblems and timeProblems', () => {
  const env = {
    domain: 'purser.test',
    uri: 'https://purser.test',
    chainId: 8453,
    address: address.toLowerCase(),
    challengeIssuedAt: issuedAt,
    now: new Date('2026-03-01T12:05:00.000Z'),
  };
  const f = parsed(buildSiweMessage({ ...base, statement: SIWE_STATEMENT }));

  it('accepts the fields of the challenge, in any address case and with a matching scheme', () => {
    expect(fieldProblems(f, env)).toEqual([]);
    expect(fieldProblems({ ...f, address: address.toLowerCase(), scheme: 'HTTPS' }, env)).toEqual([]);
  });

  it('names every field that disagrees', () => {
    const problems = fieldProblems(
      {
        ...f,
        domain: 'evil.test',
        scheme: 'http',
        uri: 'https://evil.test',
        version: '2',
        chainId: 137,
        address: '0x0000000000000000000000000000000000000001',
        resources: ['https://purser.test'],
        issuedAt: new Date('2026-03-01T13:00:00.000Z'),
      },
      env,
    );
    expect(problems.join('\n')).toMatch(/domain/);
    for (const word of ['domain', 'scheme', 'URI', 'Version', 'Chain ID', 'address', 'Resources', 'future']) {
      expect(
        problems.some((p) => p.includes(word)),
        word,
      ).toBe(true);
    }
    const badChecksum = address.replace('aAeb', 'aaeb');
    expect(fieldProblems({ ...f, address: badChecksum }, env)).toEqual([
      'the address has a wrong EIP-55 checksum',
    ]);
  });

  it('checks that the dates are sane', () => {
    const early = new Date(issuedAt.getTime() - 6 * 60 * 1000);
    expect(fieldProblems({ ...f, issuedAt: early, expirationTime: null }, env)).toEqual([
      'Issued At is before the challenge was issued',
    ]);
    expect(fieldProblems({ ...f, expirationTime: issuedAt }, env)).toEqual([
      'Expiration Time is not after Issued At',
    ]);
    expect(timeProblems(f, expirationTime)).toEqual({ expired: true, notYetValid: false });
    expect(timeProblems(f, new Date(expirationTime.getTime() - 1))).toEqual({
      expired: false,
      notYetValid: false,
    });
    expect(timeProblems({ ...f, notBefore: new Date('2026-03-01T13:00:00Z') }, env.now).notYetValid).toBe(
      true,
    );
  });
});

describe('challengeProblems', () => {
  const issued = parsed(buildSiweMessage({ ...base, statement: SIWE_STATEMENT }));

  it('accepts the same fields written otherwise: address case, domain case, date notation', () => {
    const text = buildSiweMessage({ ...base, statement: SIWE_STATEMENT })
      .replace(address, address.toLowerCase())
      .replace('purser.test wants', 'Purser.Test wants')
      .replace('Issued At: 2026-03-01T12:00:00.000Z', 'Issued At: 2026-03-01T13:00:00+01:00');
    expect(challengeProblems(parsed(text), issued)).toEqual([]);
  });

  it('names each field that differs, and an optional field present on one side only', () => {
    const changes: [string, Partial<SiweFields>][] = [
      ['the scheme', { scheme: 'https' }],
      ['the domain', { domain: 'evil.test' }],
      ['the address', { address: '0x0000000000000000000000000000000000000001' }],
      ['the statement', { statement: null }],
      ['URI', { uri: 'https://purser.test/x' }],
      ['Version', { version: '2' }],
      ['Chain ID', { chainId: 137 }],
      ['Nonce', { nonce: 'otherNonce00000000000000' }],
      ['Issued At', { issuedAt: new Date(issuedAt.getTime() + 1) }],
      ['Expiration Time', { expirationTime: new Date(expirationTime.getTime() + 60_000) }],
      ['Expiration Time', { expirationTime: null }],
      ['Not Before', { notBefore: issuedAt }],
      ['Request ID', { requestId: '' }],
      ['Resources', { resources: [] }],
    ];
    for (const [field, change] of changes) {
      const problems = challengeProblems({ ...issued, ...change }, issued);
      expect(problems, field).toHaveLength(1);
      expect(problems[0], field).toMatch(new RegExp(`^${field} is .*, the challenge says `));
    }
  });
});
