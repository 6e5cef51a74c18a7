// RFC 8785 (JSON Canonicalization Scheme): object keys sorted by UTF-16 code units, no
// whitespace, strings and numbers serialized as ECMAScript JSON.stringify does (which is what
// the RFC specifies). Used for hashes that must not depend on key order.

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw new TypeError('canonicalJson: non-finite numbers have no JSON form');
    }
    if (typeof value === 'bigint') throw new TypeError('canonicalJson: bigint must be a decimal string');
    const s = JSON.stringify(value);
    if (s === undefined) throw new TypeError(`canonicalJson: ${typeof value} has no JSON form`);
    return s;
  }
  if (Array.isArray(value))
    return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
