// A delegation's scope: semantic checks beyond the request schema (400 naming the field), and
// the fit inside the wallet's active policy (decisions.md, "Ownership of wallets").

import { getAddress, isAddress, isAddressEqual, type Address } from 'viem';
import { AppError, invalidRequest } from '../../core/errors/app-error.ts';
import { evaluate, usdToMicro, type DelegationCall, type PolicyDocument } from '../policies/index.ts';
import type { TokenRegistry, VenueName } from '../registry/index.ts';
import { UINT256_MAX, type PermissionScope } from './kernel.ts';
import type { StoredScope } from './store.ts';

/** Approval targets and routers of the venues, by chain (execution reference §1). */
const VENUE_CONTRACTS: Record<number, Array<{ venue: VenueName; address: Address }>> = {
  8453: [
    { venue: '0x', address: '0x0000000000001fF3684f28c67538d4D072C22734' },
    { venue: 'kyberswap', address: '0x6131B5fae19EA4f9D964eAc0408E4408b66337b5' },
    { venue: 'aerodrome', address: '0xcF77a3Ba9A5CA399B7c97c74d54e5b1Beb874E43' },
    { venue: 'uniswap-v3', address: '0x2626664c2603336E57B271c5C0b26F421741e481' },
  ],
};

export interface ScopeInput {
  account: string;
  calls: Array<{ target: string; selector: string; value_limit: string }>;
  valid_after?: number | undefined;
  valid_until: number;
  rate_limit?: { count: number; interval_secs?: number | undefined } | undefined;
}

/**
 * Checks what the schema cannot: EIP-55 checksums, uint256 value limits, targets that are not
 * the account itself or the zero address (wildcard), no duplicate (target, selector) pairs, and
 * a window that ends after it starts and after now. Returns the normalized scope.
 */
export function normalizeScope(input: ScopeInput, nowSecs: number): StoredScope {
  const problems: string[] = [];
  if (!isAddress(input.account)) problems.push('account has an invalid EIP-55 checksum');
  const account = input.account.toLowerCase();
  const seen = new Set<string>();
  const calls = input.calls.map((call, i) => {
    const target = call.target.toLowerCase();
    if (!isAddress(call.target)) problems.push(`calls[${i}].target has an invalid EIP-55 checksum`);
    else if (target === account) problems.push(`calls[${i}].target must not be the account itself`);
    else if (/^0x0{40}$/.test(target)) problems.push(`calls[${i}].target must not be the zero address`);
    if (BigInt(call.value_limit) > UINT256_MAX) problems.push(`calls[${i}].value_limit exceeds uint256`);
    const selector = call.selector.toLowerCase();
    const key = `${target}:${selector}`;
    if (seen.has(key)) problems.push(`calls[${i}] repeats an earlier target and selector`);
    seen.add(key);
    return { target, selector, value_limit: BigInt(call.value_limit).toString() };
  });
  const validAfter = input.valid_after ?? 0;
  if (input.valid_until <= validAfter) problems.push('valid_until must be after valid_after');
  if (input.valid_until <= nowSecs) problems.push('valid_until must be in the future (unix seconds)');
  if (problems.length > 0) throw invalidRequest(`Invalid body: ${problems.join('; ')}.`);
  return {
    calls,
    valid_after: validAfter,
    valid_until: input.valid_until,
    rate_limit: input.rate_limit
      ? { count: input.rate_limit.count, interval_secs: input.rate_limit.interval_secs ?? 0 }
      : null,
  };
}

export function permissionScope(scope: StoredScope): PermissionScope {
  return {
    calls: scope.calls.map((c) => ({
      target: getAddress(c.target),
      selector: c.selector as `0x${string}`,
      valueLimit: BigInt(c.value_limit),
    })),
    validAfter: scope.valid_after,
    validUntil: scope.valid_until,
    rateLimit: scope.rate_limit
      ? { count: scope.rate_limit.count, intervalSecs: scope.rate_limit.interval_secs }
      : null,
  };
}

/** Micro-USD of `wei` at `usdPerNative`, rounded up. */
export function weiToMicroUsd(wei: bigint, usdPerNative: string): bigint {
  const price = usdToMicro(usdPerNative);
  return (wei * price + 10n ** 18n - 1n) / 10n ** 18n;
}

/** How the policy engine sees each call: wrapped native, a registry token, or a venue contract. */
export function classifyCalls(
  registry: TokenRegistry,
  chainId: number,
  scope: StoredScope,
  usdPerNative: string,
): DelegationCall[] {
  const chain = registry.chain(chainId);
  return scope.calls.map((call) => {
    const valueLimitMicroUsd = weiToMicroUsd(BigInt(call.value_limit), usdPerNative);
    const target = call.target as Address;
    if (chain && isAddressEqual(chain.wrappedNative, target)) {
      return { target: 'wrapped_native', valueLimitMicroUsd };
    }
    const token = registry.findToken(chainId, target);
    if (token) return { target: 'token', symbol: token.symbol, valueLimitMicroUsd };
    const venue = VENUE_CONTRACTS[chainId]?.find((v) => isAddressEqual(v.address, target));
    return { target: 'venue', venue: venue?.venue ?? null, valueLimitMicroUsd };
  });
}

/** Throws 422 POLICY_VIOLATION naming the rule when the scope is wider than the policy. */
export function assertFitsPolicy(
  policy: PolicyDocument,
  registry: TokenRegistry,
  chainId: number,
  scope: StoredScope,
  usdPerNative: string,
): void {
  const calls = classifyCalls(registry, chainId, scope, usdPerNative);
  const verdict = evaluate(policy, { kind: 'delegation_scope', chainId, calls });
  if (!verdict.allow) {
    throw new AppError(verdict.code, `The delegation is wider than the policy: ${verdict.message}`, {
      remediation:
        'Narrow the calls to registry tokens of the policy allowlist, venues in execution.venues or the wrapped native token, with value limits within spend.per_tx_usd; or publish a wider policy.',
    });
  }
}
