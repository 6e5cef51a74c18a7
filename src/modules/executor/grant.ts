// Whether a delegation's grant covers the calls a slice would send, checked before anything is
// signed, as the chain's call policy will check them: each call's (target, selector) must be
// granted, its value within the granted limit, and every parameter rule of that grant must hold
// on the call's data. A call outside the grant would make the operation fail validation, so the
// executor aborts POLICY_VIOLATION naming it instead of sending it. Pure.

import { hexToBigInt, size, slice, type Hex } from 'viem';
import type { Call } from '../delegations/index.ts';
import type { ParamRule } from '../delegations/kernel.ts';
import type { StoredScope } from '../delegations/store.ts';

/** The 32-byte argument word at `offset` (after the selector), or null when the data is shorter. */
function word(data: Hex, offset: number): bigint | null {
  const start = 4 + offset;
  if (size(data) < start + 32) return null;
  return hexToBigInt(slice(data, start, start + 32));
}

function ruleHolds(data: Hex, rule: ParamRule): boolean {
  const value = word(data, rule.offset);
  if (value === null) return false;
  const params = rule.params.map((p) => hexToBigInt(p));
  const first = params[0] ?? 0n;
  switch (rule.condition) {
    case 'equal':
      return value === first;
    case 'greater_than':
      return value > first;
    case 'less_than':
      return value < first;
    case 'greater_than_or_equal':
      return value >= first;
    case 'less_than_or_equal':
      return value <= first;
    case 'not_equal':
      return value !== first;
    case 'one_of':
      return params.includes(value);
  }
}

/**
 * Why the grant does not cover `calls` (the first call it refuses, in words), or null when it
 * covers them all.
 */
export function uncoveredCall(scope: StoredScope, calls: readonly Call[]): string | null {
  for (const [i, call] of calls.entries()) {
    const selector = size(call.data) >= 4 ? slice(call.data, 0, 4).toLowerCase() : null;
    const granted = scope.calls.find(
      (g) => g.target.toLowerCase() === call.to.toLowerCase() && g.selector.toLowerCase() === selector,
    );
    if (!granted) {
      return `call ${i} (${selector ?? 'no selector'} on ${call.to.toLowerCase()}) is not among the granted calls`;
    }
    if (call.value > BigInt(granted.value_limit)) {
      return `call ${i} sends ${call.value} wei, above the granted value limit ${granted.value_limit}`;
    }
    const broken = (granted.rules ?? []).find((r) => !ruleHolds(call.data, r));
    if (broken) {
      return `call ${i} (${selector} on ${call.to.toLowerCase()}) breaks the grant's rule: ${broken.condition} at argument offset ${broken.offset}`;
    }
  }
  return null;
}
