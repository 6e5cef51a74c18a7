// A delegation's scope: semantic checks beyond the request schema (400 naming the field), and
// the fit inside the wallet's active policy (decisions.md, "Ownership of wallets").

import { getAddress, isAddress, isAddressEqual, type Address, type Hex } from 'viem';
import { AppError, invalidRequest } from '../../core/errors/app-error.ts';
import { evaluate, usdToMicro, type DelegationCall, type PolicyDocument } from '../policies/index.ts';
import type { TokenRegistry } from '../registry/index.ts';
import { UINT256_MAX, type PermissionScope } from './kernel.ts';
import { isApproval, rulesFor } from './rules.ts';
import type { StoredScope } from './store.ts';

/** A venue's contract on the chain (allowance target or router), as the venue adapters configure it. */
export interface VenueContract {
  venue: string;
  address: Address;
}

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
      rules: (c.rules ?? []).map((r) => ({ ...r, params: r.params.map((p) => p as Hex) })),
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

/**
 * How the policy engine sees each call: wrapped native, a registry token, or a venue contract. A
 * contract several venues share (the devnet's aggregator fakes route through its Uniswap v2
 * router) counts as the first of them in `preferredVenues`, else the first that has it.
 */
export function classifyCalls(
  registry: TokenRegistry,
  chainId: number,
  scope: StoredScope,
  usdPerNative: string,
  venues: readonly VenueContract[],
  preferredVenues: readonly string[] = [],
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
    const owners = venues.filter((v) => isAddressEqual(v.address, target));
    const venue = owners.find((v) => preferredVenues.includes(v.venue)) ?? owners[0];
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
  venues: readonly VenueContract[],
): void {
  const calls = classifyCalls(registry, chainId, scope, usdPerNative, venues, policy.execution.venues);
  const verdict = evaluate(policy, { kind: 'delegation_scope', chainId, calls });
  if (!verdict.allow) {
    throw new AppError(verdict.code, `The delegation is wider than the policy: ${verdict.message}`, {
      remediation:
        'Narrow the calls to registry tokens of the policy allowlist, venues in execution.venues or the wrapped native token, with value limits within spend.per_tx_usd; or publish a wider policy.',
    });
  }
}

/**
 * The scope with each call's parameter rules (rules.ts), replacing any it had: approvals may name
 * only the contracts of the venues in the policy's `execution.venues` on the chain, swaps pay
 * `account`. An approval with no such contract is refused (422): it could never pass on-chain.
 */
export function narrowScope(
  policy: PolicyDocument,
  account: string,
  scope: StoredScope,
  venues: readonly VenueContract[],
): StoredScope {
  const allowed = policy.execution.venues as readonly string[];
  const spenders = venues.filter((v) => allowed.includes(v.venue)).map((v) => v.address);
  const ctx = { account: getAddress(account), spenders };
  const calls = scope.calls.map((call, i) => {
    if (isApproval(call.selector) && spenders.length === 0) {
      throw new AppError(
        'POLICY_VIOLATION',
        `The delegation is wider than the policy: calls[${i}] grants an approval, but no venue of execution.venues (${allowed.join(', ') || 'none'}) has a contract on this chain to approve.`,
        { remediation: 'Allow a venue that runs on this chain in execution.venues, or drop the approval.' },
      );
    }
    return {
      target: call.target,
      selector: call.selector,
      value_limit: call.value_limit,
      rules: rulesFor(call.selector as Hex, ctx),
    };
  });
  return { ...scope, calls };
}
