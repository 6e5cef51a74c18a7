// Compares an answer with a vendor's documented example: every key the example has must be there
// with the same JSON type (a documented null accepts an object or null; arrays are compared by
// their first element). Extra keys are allowed: vendors add fields.

export function shapeMismatches(actual: unknown, documented: unknown, path = '$'): string[] {
  if (documented === null) {
    return actual === null || (typeof actual === 'object' && !Array.isArray(actual))
      ? []
      : [`${path}: expected an object or null, got ${kind(actual)}`];
  }
  if (Array.isArray(documented)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${kind(actual)}`];
    if (documented.length === 0 || actual.length === 0) return [];
    return shapeMismatches(actual[0], documented[0], `${path}[0]`);
  }
  if (typeof documented === 'object') {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) {
      return [`${path}: expected an object, got ${kind(actual)}`];
    }
    const out: string[] = [];
    for (const [key, value] of Object.entries(documented as Record<string, unknown>)) {
      if (!(key in actual)) out.push(`${path}.${key}: missing`);
      else out.push(...shapeMismatches((actual as Record<string, unknown>)[key], value, `${path}.${key}`));
    }
    return out;
  }
  return typeof actual === typeof documented
    ? []
    : [`${path}: expected ${typeof documented}, got ${kind(actual)}`];
}

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
