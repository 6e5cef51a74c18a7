// Assertions on the spec's error body: `{code, message, remediation, docs_url, request_id, next?}`
// and nothing else, with `request_id` repeated in the `x-request-id` header.

import { expect } from 'vitest';

export interface ErrorBodyShape {
  code: string;
  message: string;
  remediation: string;
  docs_url: string;
  request_id: string;
  next?: { method: string; path: string; why: string }[];
}

export interface ResponseLike {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

const REQUIRED_KEYS = ['code', 'docs_url', 'message', 'remediation', 'request_id'];
const NEXT_METHODS = ['GET', 'POST', 'PUT', 'DELETE'];

/** Parses an error response and checks everything every error must satisfy; returns the body. */
export function expectErrorBody(res: ResponseLike, status: number, code: string): ErrorBodyShape {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  return checkErrorShape(body, res.headers['x-request-id'], code);
}

export function checkErrorShape(
  body: Record<string, unknown>,
  requestIdHeader: unknown,
  code: string,
): ErrorBodyShape {
  const keys = Object.keys(body).sort();
  const expectedKeys = 'next' in body ? [...REQUIRED_KEYS, 'next'].sort() : REQUIRED_KEYS;
  expect(keys).toEqual(expectedKeys);
  expect(body['code']).toBe(code);
  for (const key of REQUIRED_KEYS) {
    expect(typeof body[key], key).toBe('string');
    expect((body[key] as string).length, key).toBeGreaterThan(0);
  }
  expect(body['docs_url']).toMatch(new RegExp(`/docs/errors#${code}$`));
  expect(body['request_id']).toMatch(/^req_[0-9a-z]{20}$/);
  expect(requestIdHeader).toBe(body['request_id']);
  if ('next' in body) {
    expect(Array.isArray(body['next'])).toBe(true);
    for (const step of body['next'] as Record<string, unknown>[]) {
      expect(Object.keys(step).sort()).toEqual(['method', 'path', 'why']);
      expect(NEXT_METHODS).toContain(step['method']);
      expect(step['path']).toMatch(/^\//);
    }
  }
  return body as unknown as ErrorBodyShape;
}
