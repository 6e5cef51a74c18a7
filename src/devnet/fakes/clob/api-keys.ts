// The CLOB fake's API keys: one per (address, nonce), several per address, made with
// `POST /auth/api-key`, derived again with `GET /auth/derive-api-key`, listed and deleted; kept
// (secrets included) in the JSON file the options name across restarts (mode 0600).

import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { getAddress, type Address } from 'viem';
import { answer, CLOB_ERRORS, refusal } from './answers.ts';
import type { FakeAnswer } from '../loopback.ts';
import type { ApiKeyRecord, ClobState } from './state.ts';
import { lower } from './units.ts';

const ownerNonce = (address: string, nonce: string) => `${lower(address)}:${nonce}`;

function rememberKey(state: ClobState, k: ApiKeyRecord): void {
  state.keys.set(k.apiKey, k);
  state.keyByOwnerNonce.set(ownerNonce(k.address, k.nonce), k.apiKey);
}

/** Reads the keys kept in the options' file, if any (a missing file holds none). */
export function loadKeys(state: ClobState): void {
  if (!state.persistPath) return;
  let saved: { keys?: ApiKeyRecord[] } | null = null;
  try {
    saved = JSON.parse(readFileSync(state.persistPath, 'utf8')) as { keys?: ApiKeyRecord[] };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new Error(`startClobFake: cannot read ${state.persistPath}: ${(err as Error).message}`);
    }
  }
  for (const k of saved?.keys ?? []) rememberKey(state, { ...k, address: getAddress(k.address) });
}

function persistKeys(state: ClobState): void {
  if (!state.persistPath) return;
  mkdirSync(dirname(state.persistPath), { recursive: true });
  const tmp = `${state.persistPath}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ keys: [...state.keys.values()] }, null, 2), { mode: 0o600 });
  renameSync(tmp, state.persistPath);
}

function newKey(state: ClobState, address: Address, nonce: string): ApiKeyRecord {
  return {
    apiKey: randomUUID(),
    secret: randomBytes(32).toString('base64').replace(/\+/g, '-').replace(/\//g, '_'),
    passphrase: randomBytes(32).toString('hex'),
    address,
    nonce,
    createdAt: state.nowSeconds(),
  };
}

const keyAnswer = (k: ApiKeyRecord) =>
  answer(200, { apiKey: k.apiKey, secret: k.secret, passphrase: k.passphrase });

/** `POST /auth/api-key` (L1): a new key for (address, nonce); refused when there is one already. */
export function createApiKey(state: ClobState, address: Address, nonce: string): FakeAnswer {
  if (state.keyByOwnerNonce.has(ownerNonce(address, nonce))) return refusal(400, CLOB_ERRORS.createKey);
  const k = newKey(state, address, nonce);
  rememberKey(state, k);
  persistKeys(state);
  return keyAnswer(k);
}

/** `GET /auth/derive-api-key` (L1): the key of (address, nonce) again. */
export function deriveApiKey(state: ClobState, address: Address, nonce: string): FakeAnswer {
  const id = state.keyByOwnerNonce.get(ownerNonce(address, nonce));
  const k = id === undefined ? undefined : state.keys.get(id);
  if (!k) return refusal(400, CLOB_ERRORS.deriveKey);
  return keyAnswer(k);
}

/** `DELETE /auth/api-key` (L2): the caller's own key. */
export function deleteApiKey(state: ClobState, key: ApiKeyRecord): void {
  state.keys.delete(key.apiKey);
  state.keyByOwnerNonce.delete(ownerNonce(key.address, key.nonce));
  persistKeys(state);
}

/** The API key ids of an address (no secrets). */
export function apiKeyIds(state: ClobState, address: Address): string[] {
  return [...state.keys.values()].filter((k) => lower(k.address) === lower(address)).map((k) => k.apiKey);
}
