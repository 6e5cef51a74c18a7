// The statements store settings (STATEMENTS_DIR, STATEMENTS_S3_*) and the store they select.

import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.ts';
import { createObjectStore } from './index.ts';

const BASE = { PURSER_ENV: 'development', DEVNET: 'false' };
const BUCKET = {
  STATEMENTS_S3_ENDPOINT: 'https://s3.eu-central-1.amazonaws.com/',
  STATEMENTS_S3_BUCKET: 'purser-statements',
  STATEMENTS_S3_ACCESS_KEY_ID: 'AKIDEXAMPLE',
  STATEMENTS_S3_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig({ ...BASE, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('statements settings', () => {
  it('default to a directory under the data directory', () => {
    expect(loadConfig(BASE).statements).toEqual({ dir: '.purser/statements', s3: null });
    expect(loadConfig({ ...BASE, PURSER_DATA_DIR: '/var/lib/purser/' }).statements.dir).toBe(
      '/var/lib/purser/statements',
    );
    expect(loadConfig({ ...BASE, STATEMENTS_DIR: '/srv/statements' }).statements.dir).toBe('/srv/statements');
    expect(createObjectStore(loadConfig(BASE).statements).kind).toBe('filesystem');
  });

  it('take a bucket when all of its settings are there', () => {
    const config = loadConfig({ ...BASE, ...BUCKET });
    expect(config.statements.s3).toEqual({
      endpoint: 'https://s3.eu-central-1.amazonaws.com',
      bucket: 'purser-statements',
      region: 'us-east-1',
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: BUCKET.STATEMENTS_S3_SECRET_ACCESS_KEY,
    });
    expect(
      loadConfig({ ...BASE, ...BUCKET, STATEMENTS_S3_REGION: 'eu-central-1' }).statements.s3?.region,
    ).toBe('eu-central-1');
    expect(createObjectStore(config.statements).kind).toBe('s3');
  });

  it('name every missing or malformed bucket setting, never the secret', () => {
    const { STATEMENTS_S3_SECRET_ACCESS_KEY: _secret, ...withoutSecret } = BUCKET;
    expect(problemsOf(withoutSecret)).toEqual([
      'a statements bucket needs STATEMENTS_S3_SECRET_ACCESS_KEY as well',
    ]);
    expect(problemsOf({ STATEMENTS_S3_REGION: 'eu-west-1' })).toEqual([
      'STATEMENTS_S3_REGION needs a bucket',
    ]);
    const bad = problemsOf({
      ...BUCKET,
      STATEMENTS_S3_ENDPOINT: 'ftp://example.com',
      STATEMENTS_S3_BUCKET: 'Not_A_Bucket',
      STATEMENTS_S3_REGION: 'EU WEST',
    });
    expect(bad).toHaveLength(3);
    expect(bad.join(' ')).toMatch(/STATEMENTS_S3_ENDPOINT.*STATEMENTS_S3_BUCKET.*STATEMENTS_S3_REGION/);
    expect(bad.join(' ')).not.toContain(BUCKET.STATEMENTS_S3_SECRET_ACCESS_KEY);
  });
});
