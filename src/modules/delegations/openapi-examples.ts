// The OpenAPI examples of the delegation routes: one grant of a Kernel v3.1 smart account on Base,
// prepared, confirmed by its owner, renewed and revoked. The account is the counterfactual Kernel
// account of the owner 0xe0f581fEF9604DD3B3E89aFc47e27CD1AF01a65D at index 0 (default modules);
// the permission's bytes (enable data, selector data, typed data, digest) and the owner's
// revocation calls are encoded here by the module's own encoder, so they are exactly what the
// routes answer for these inputs. `enable_sig` is that owner's signature over the digest.

import type { Address, Hex } from 'viem';
import { DEFAULT_KERNEL_MODULES } from '../../config.ts';
import { buildPermission, revocationCalls, type PermissionScope } from './kernel.ts';
import { REVOCATION_NOTE } from './service.ts';
import type { StoredScope } from './store.ts';

const ACCOUNT: Address = '0x9Bf338818BA7cf5C658d5182349c51C4D4528579';
const OWNER: Address = '0xe0f581fEF9604DD3B3E89aFc47e27CD1AF01a65D';
const SESSION_KEY: Address = '0x4B73313Fa0dF3aF8345bC91C63B42a9bf345BCdC';
const USDC: Address = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
/** Uniswap's SwapRouter02 on Base: the only contract of the policy's venues (`uniswap-v3`). */
const SWAP_ROUTER = '0x2626664c2603336e57b271c5c0b26f421741e481';

const DELEGATION_ID = 'b3e1f0a2-6c4d-4f8e-9a71-2d5c8e0f3b64';
const RENEWED_ID = '0f7c2d9e-41b8-4a3c-8e65-b19d0a7f2c53';
/** 2026-03-14T09:30:00Z, when the grant was prepared; it runs 30 days. */
const PREPARED_AT = 1773480600;
const VALID_UNTIL = PREPARED_AT + 30 * 24 * 3600;
/** 2026-04-10T08:00:00Z, when it was renewed until 2026-05-10T08:00:00Z. */
const RENEWED_AT = 1775808000;
const RENEWED_UNTIL = 1778400000;

const M = DEFAULT_KERNEL_MODULES;

function scopeOf(validAfter: number, validUntil: number): StoredScope {
  return {
    calls: [
      {
        target: USDC.toLowerCase(),
        selector: '0x095ea7b3',
        value_limit: '0',
        rules: [
          {
            condition: 'one_of',
            offset: 0,
            params: [`0x000000000000000000000000${SWAP_ROUTER.slice(2)}`],
          },
        ],
      },
    ],
    valid_after: validAfter,
    valid_until: validUntil,
    rate_limit: { count: 100, interval_secs: 60 },
  };
}

function permissionOf(scope: StoredScope): PermissionScope {
  return {
    calls: scope.calls.map((c) => ({
      target: c.target as Address,
      selector: c.selector as Hex,
      valueLimit: BigInt(c.value_limit),
      rules: (c.rules ?? []).map((r) => ({ ...r, params: r.params as Hex[] })),
    })),
    validAfter: scope.valid_after,
    validUntil: scope.valid_until,
    rateLimit: scope.rate_limit
      ? { count: scope.rate_limit.count, intervalSecs: scope.rate_limit.interval_secs }
      : null,
  };
}

function delegationExample(input: {
  id: string;
  permissionId: Hex;
  kernelNonce: number;
  scope: StoredScope;
  deployed: boolean;
  createdAt: string;
  renewedFrom: string | null;
}) {
  const built = buildPermission({
    account: ACCOUNT,
    chainId: 8453,
    kernelVersion: '0.3.1',
    modules: M,
    permissionId: input.permissionId,
    sessionKey: SESSION_KEY,
    kernelNonce: input.kernelNonce,
    scope: permissionOf(input.scope),
  });
  return {
    id: input.id,
    account: ACCOUNT.toLowerCase(),
    chain_id: 8453,
    status: 'prepared' as 'prepared' | 'active',
    permission_id: built.permissionId,
    validation_id: built.validationId,
    enable_data: built.enableData,
    kernel_nonce: input.kernelNonce,
    digest: built.digest,
    session_key: SESSION_KEY.toLowerCase(),
    scope: input.scope,
    account_deployed: input.deployed,
    valid_until: new Date(input.scope.valid_until * 1000).toISOString(),
    created_at: input.createdAt,
    confirmed_at: null as string | null,
    revoked_at: null,
    owner: null as string | null,
    account_index: null as string | null,
    kernel_version: '0.3.1',
    selector_data: built.selectorData,
    typed_data: built.typedData,
    modules: {
      ecdsa_signer: M.ecdsaSigner.toLowerCase(),
      call_policy: M.callPolicy.toLowerCase(),
      timestamp_policy: M.timestampPolicy.toLowerCase(),
      rate_limit_policy: M.rateLimitPolicy.toLowerCase(),
    },
    policy_version: 1,
    renewed_from: input.renewedFrom,
  };
}

export const PREPARE_BODY = {
  account: ACCOUNT,
  chain_id: 8453 as const,
  calls: [{ target: USDC, selector: '0x095ea7b3', value_limit: '0' }],
  valid_until: VALID_UNTIL,
  rate_limit: { count: 100, interval_secs: 60 },
};

/** The grant as prepared: the account is not deployed yet (its first delegated operation deploys it). */
export const PREPARED_DELEGATION = delegationExample({
  id: DELEGATION_ID,
  permissionId: '0x5c1e9a07',
  kernelNonce: 1,
  scope: scopeOf(0, VALID_UNTIL),
  deployed: false,
  createdAt: '2026-03-14T09:30:00.412Z',
  renewedFrom: null,
});

export const CONFIRM_BODY = {
  enable_sig:
    '0x27ecc1608310b001eafc18074d818be5c3654842f3512c5f70349e1dafbb572e' +
    '7b24fd8fbd9c10466c55c7817a92219db481b430f4fd76231ba30a6722f263f61c',
  owner: OWNER,
  index: '0',
};

export const ACTIVE_DELEGATION = {
  ...PREPARED_DELEGATION,
  status: 'active' as const,
  confirmed_at: '2026-03-14T09:31:12.087Z',
  owner: OWNER.toLowerCase(),
  account_index: '0',
};

export const RENEW_BODY = { valid_until: RENEWED_UNTIL };

/** The renewal: a new prepared grant with the same calls and rate limit, from the renewal on. */
export const RENEWED_DELEGATION = delegationExample({
  id: RENEWED_ID,
  permissionId: '0xa3f07d21',
  kernelNonce: 2,
  scope: scopeOf(RENEWED_AT, RENEWED_UNTIL),
  deployed: true,
  createdAt: '2026-04-10T08:00:00.231Z',
  renewedFrom: DELEGATION_ID,
});

/** Revoked after its first use deployed the account (its Kernel nonce is then 2): the next nonce is 3. */
export const REVOCATION = {
  id: DELEGATION_ID,
  status: 'revoked' as const,
  revocation: {
    ...revocationCalls(ACCOUNT, PREPARED_DELEGATION.validation_id, PREPARED_DELEGATION.enable_data, 3),
    note: REVOCATION_NOTE,
  },
};

export const DELEGATION_ID_PARAMS = { id: DELEGATION_ID };
export const LIST_QUERY = { account: ACCOUNT, limit: 50 };
