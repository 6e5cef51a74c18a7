// The reader of one environment: the settings as trimmed strings, integers, booleans, keys, USD
// amounts and base URLs, each falling back to its default and reporting what is wrong into the
// one list of problems loadConfig throws with (src/config.ts).

import { parseUsd, usdToMicro } from '../core/money.ts';

export interface EnvReader {
  /** The setting trimmed; undefined when unset or blank. */
  str(name: string): string | undefined;
  /** An integer between min and max; the fallback when unset or wrong. */
  int(name: string, fallback: number, min: number, max: number): number;
  /** true/false, 1/0, yes/no, on/off; the fallback when unset or wrong. */
  bool(name: string, fallback: boolean): boolean;
  /** A private key (0x and 64 hex characters); the fallback when unset or wrong. */
  hexKey(name: string, fallback: `0x${string}` | null): `0x${string}` | null;
  /** A USD amount in micro-dollars; the fallback's when unset or wrong. */
  usd(name: string, fallback: string): bigint;
  /** An http(s) URL without a query, its trailing slashes removed; the fallback when wrong. */
  baseUrl(name: string, fallback: string): string;
  /** Every problem found so far, in the order the settings were read. */
  problems: string[];
}

export function envReader(env: NodeJS.ProcessEnv): EnvReader {
  const problems: string[] = [];
  const str = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const hexKey = (name: string, fallback: `0x${string}` | null): `0x${string}` | null => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (!/^0x[0-9a-fA-F]{64}$/.test(raw)) {
      problems.push(`${name} must be a private key (0x followed by 64 hex characters)`);
      return fallback;
    }
    return raw as `0x${string}`;
  };
  const usd = (name: string, fallback: string): bigint => {
    const raw = str(name) ?? fallback;
    const micro = parseUsd(raw);
    if (micro === null) {
      problems.push(`${name} must be a USD amount such as 12.5 (got "${raw}")`);
      return usdToMicro(fallback);
    }
    return micro;
  };
  const baseUrl = (name: string, fallback: string): string => {
    const raw = (str(name) ?? fallback).replace(/\/+$/, '');
    try {
      const url = new URL(raw);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash) return raw;
    } catch {
      // reported below
    }
    problems.push(`${name} must be an http(s) URL without a query (got "${raw}")`);
    return fallback;
  };
  return { str, int, bool, hexKey, usd, baseUrl, problems };
}
