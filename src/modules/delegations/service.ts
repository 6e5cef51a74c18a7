import type { Actor } from '../../core/http/actor.ts';
// Delegations: prepare, confirm, read, list, revoke, renew and expire session-key grants. Chain
// reads happen before the transaction (the routes call them first); the transactional steps take
// only `tx`. Events and audit facts are written in the same transaction as the state they report.

import { actorName } from '../../core/http/actor.ts';
import { getAddress, isAddressEqual, type Address, type Hex } from 'viem';
import { venueContracts } from '../../adapters/venues/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { Db, DbExecutor } from '../../core/db/database.ts';
import { withTransaction } from '../../core/db/database.ts';
import { AppError, invalidRequest, notFound, unavailable } from '../../core/errors/app-error.ts';
import { newUuid } from '../../core/ids.ts';
import type { AppDeps } from '../../deps.ts';
import { recordAudit } from '../audit/index.ts';
import { emitEvent } from '../events/index.ts';
import { getActivePolicy, noPolicyError } from '../policies/index.ts';
import {
  buildPermission,
  domainVersion,
  newPermissionId,
  revocationCalls,
  UINT256_MAX,
  type KernelModules,
  type KernelVersion,
} from './kernel.ts';
import { counterfactualKernelAccount, type KernelDeployment } from './kernel-account.ts';
import { readAccountOwner, readAccountState, signedBy, type AccountState } from './onchain.ts';
import { assertFitsPolicy, narrowScope, permissionScope } from './scope.ts';
import {
  expireDue,
  findDelegation,
  insertDelegation,
  listDelegationRows,
  permissionIdTaken,
  updateDelegation,
  type DelegationRow,
  type DelegationStatus,
  type StoredScope,
} from './store.ts';

/** Renewal: default duration is the original's, capped at 90 days. */
export const RENEWAL_MAX_SECS = 90 * 24 * 3600;

export type DelegationActor = Actor;

/** The Delegation resource of the spec (section 2), with what the owner and enable mode need. */
export interface Delegation {
  id: string;
  account: string;
  chain_id: number;
  status: DelegationStatus;
  permission_id: string;
  validation_id: string;
  enable_data: string;
  kernel_nonce: number;
  digest: string;
  session_key: string;
  scope: StoredScope;
  account_deployed: boolean;
  valid_until: string;
  created_at: string;
  confirmed_at: string | null;
  revoked_at: string | null;
  owner: string | null;
  account_index: string | null;
  kernel_version: string;
  selector_data: string;
  typed_data: ReturnType<typeof buildPermission>['typedData'];
  modules: {
    ecdsa_signer: string;
    call_policy: string;
    timestamp_policy: string;
    rate_limit_policy: string | null;
  };
  policy_version: number;
  renewed_from: string | null;
}

export const nowSecsOf = (clock: Clock): number => Math.floor(clock.now().getTime() / 1000);

function modulesOf(deps: AppDeps, chainId: number): KernelModules & KernelDeployment {
  const modules = deps.config.kernel.modules[chainId];
  if (!modules) throw unavailable(`No Kernel module addresses are configured for chain ${chainId}.`);
  return {
    factory: getAddress(modules.factory),
    implementation: getAddress(modules.implementation),
    ecdsaSigner: getAddress(modules.ecdsaSigner),
    callPolicy: getAddress(modules.callPolicy),
    timestampPolicy: getAddress(modules.timestampPolicy),
    rateLimitPolicy: getAddress(modules.rateLimitPolicy),
    ecdsaValidator: getAddress(modules.ecdsaValidator),
  };
}

function sessionKeyOf(deps: AppDeps): Address {
  const key = deps.config.executorAddress;
  if (!key) {
    throw unavailable('No executor address is configured (PURSER_EXECUTOR_ADDRESS); delegations name it.');
  }
  return getAddress(key);
}

/** `expired` once valid_until has passed, even before the expiry job has marked the row. */
function effectiveStatus(row: DelegationRow, nowSecs: number): DelegationStatus {
  if ((row.status === 'prepared' || row.status === 'active') && row.valid_until <= nowSecs) return 'expired';
  return row.status;
}

export function toDelegation(row: DelegationRow, nowSecs: number): Delegation {
  const typedData = buildTypedData(row);
  return {
    id: row.id,
    account: row.wallet,
    chain_id: row.chain_id,
    status: effectiveStatus(row, nowSecs),
    permission_id: row.permission_id,
    validation_id: row.validation_id,
    enable_data: row.enable_data,
    kernel_nonce: row.kernel_nonce,
    digest: row.digest,
    session_key: row.session_key,
    scope: row.scope,
    account_deployed: row.account_deployed,
    valid_until: new Date(row.valid_until * 1000).toISOString(),
    created_at: row.created_at.toISOString(),
    confirmed_at: row.confirmed_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    owner: row.owner,
    account_index: row.account_index,
    kernel_version: row.kernel_version,
    selector_data: row.selector_data,
    typed_data: typedData,
    modules: {
      ecdsa_signer: row.modules['ecdsa_signer'] ?? '',
      call_policy: row.modules['call_policy'] ?? '',
      timestamp_policy: row.modules['timestamp_policy'] ?? '',
      rate_limit_policy: row.modules['rate_limit_policy'] ?? null,
    },
    policy_version: row.policy_version,
    renewed_from: row.renewed_from,
  };
}

/** The stored typed data, rebuilt from the stored parts (the digest covers exactly these). */
function buildTypedData(row: DelegationRow) {
  return {
    domain: {
      name: 'Kernel' as const,
      version: row.domain_version,
      chainId: row.chain_id,
      verifyingContract: getAddress(row.wallet),
    },
    types: {
      Enable: [
        { name: 'validationId', type: 'bytes21' },
        { name: 'nonce', type: 'uint32' },
        { name: 'hook', type: 'address' },
        { name: 'validatorData', type: 'bytes' },
        { name: 'hookData', type: 'bytes' },
        { name: 'selectorData', type: 'bytes' },
      ],
    },
    primaryType: 'Enable' as const,
    message: {
      validationId: row.validation_id as Hex,
      nonce: row.kernel_nonce,
      hook: '0x0000000000000000000000000000000000000000' as Address,
      validatorData: row.enable_data as Hex,
      hookData: '0x' as Hex,
      selectorData: row.selector_data as Hex,
    },
  };
}

async function record(
  tx: DbExecutor,
  clock: Clock,
  actor: DelegationActor | null,
  kind: 'prepared' | 'confirmed' | 'revoked' | 'expired',
  row: DelegationRow,
): Promise<void> {
  const facts = {
    id: row.id,
    account: row.wallet,
    chain_id: row.chain_id,
    permission_id: row.permission_id,
    valid_until: row.valid_until,
    ...(row.renewed_from ? { renewed_from: row.renewed_from } : {}),
  };
  await emitEvent(tx, clock, {
    accountId: row.account_id,
    kind: `delegation.${kind}`,
    subject: row.id,
    payload: facts,
  });
  await recordAudit(tx, clock, {
    accountId: row.account_id,
    actor: actor ? actorName(actor) : 'system',
    action: `delegation.${kind}`,
    subject: row.id,
    details: facts,
    network: actor?.network ?? null,
  });
}

/**
 * NOT_FOUND (no policy) or POLICY_VIOLATION (scope wider than the policy); returns the policy's
 * version and the scope with its calls' parameter rules (venue spenders, the account as recipient).
 */
export async function checkScopeFits(
  db: DbExecutor,
  deps: AppDeps,
  accountId: string,
  wallet: string,
  chainId: number,
  scope: StoredScope,
): Promise<{ version: number; scope: StoredScope }> {
  const registry = deps.tokenRegistry;
  const policy = await getActivePolicy(db, registry, accountId, wallet);
  if (!policy) throw noPolicyError(wallet);
  const venues = venueContracts(deps.venues ?? [], chainId);
  assertFitsPolicy(policy.document, registry, chainId, scope, deps.config.nativeUsdReference, venues);
  return { version: policy.version, scope: narrowScope(policy.document, wallet, scope, venues) };
}

/** The account state a new grant needs, read from the chain (call before the transaction). */
export function readState(deps: AppDeps, chainId: number, wallet: string): Promise<AccountState> {
  return readAccountState(deps.chain, chainId, getAddress(wallet));
}

export interface NewGrant {
  wallet: string;
  chainId: number;
  scope: StoredScope;
  state: AccountState;
  renewedFrom: string | null;
}

/** Creates a prepared grant in `tx`: policy fit, a fresh permissionId, the permission, event, audit. */
export async function createGrant(
  tx: DbExecutor,
  deps: AppDeps,
  actor: DelegationActor,
  grant: NewGrant,
): Promise<Delegation> {
  const accountId = actor.principal.accountId;
  const fitted = await checkScopeFits(tx, deps, accountId, grant.wallet, grant.chainId, grant.scope);
  const { version: policyVersion, scope } = fitted;
  const modules = modulesOf(deps, grant.chainId);
  const sessionKey = sessionKeyOf(deps);
  const kernelVersion: KernelVersion = deps.config.kernel.version;
  let permissionId = newPermissionId();
  while (await permissionIdTaken(tx, grant.chainId, grant.wallet, permissionId)) {
    permissionId = newPermissionId();
  }
  const version = grant.state.domainVersion ?? domainVersion(kernelVersion);
  const built = buildPermission(
    {
      account: getAddress(grant.wallet),
      chainId: grant.chainId,
      kernelVersion,
      modules,
      permissionId,
      sessionKey,
      kernelNonce: grant.state.kernelNonce,
      scope: permissionScope(scope),
    },
    version,
  );
  const row: DelegationRow = {
    id: newUuid(),
    account_id: accountId,
    wallet: grant.wallet,
    chain_id: grant.chainId,
    status: 'prepared',
    permission_id: built.permissionId,
    validation_id: built.validationId,
    kernel_version: kernelVersion,
    domain_version: version,
    enable_data: built.enableData,
    selector_data: built.selectorData,
    kernel_nonce: grant.state.kernelNonce,
    digest: built.digest,
    session_key: sessionKey.toLowerCase(),
    modules: {
      ecdsa_signer: modules.ecdsaSigner.toLowerCase(),
      call_policy: modules.callPolicy.toLowerCase(),
      timestamp_policy: modules.timestampPolicy.toLowerCase(),
      ...(grant.scope.rate_limit ? { rate_limit_policy: modules.rateLimitPolicy.toLowerCase() } : {}),
    },
    scope,
    valid_after: grant.scope.valid_after,
    valid_until: grant.scope.valid_until,
    account_deployed: grant.state.deployed,
    policy_version: policyVersion,
    renewed_from: grant.renewedFrom,
    enable_sig: null,
    owner: null,
    account_index: null,
    factory: null,
    factory_data: null,
    created_at: deps.clock.now(),
    confirmed_at: null,
    revoked_at: null,
    expired_at: null,
  };
  await insertDelegation(tx, row);
  await record(tx, deps.clock, actor, 'prepared', row);
  return toDelegation(row, nowSecsOf(deps.clock));
}

export async function getDelegationRow(
  db: DbExecutor,
  accountId: string,
  id: string,
): Promise<DelegationRow> {
  const row = await findDelegation(db, accountId, id);
  if (!row) throw notFound(`Delegation ${id} does not exist on this account.`);
  return row;
}

const conflict = (id: string, message: string) =>
  new AppError('CONFLICT', message, {
    next: [
      {
        method: 'GET',
        path: `/v1/delegations/${id}`,
        why: 'read the delegation and act on its current status',
      },
    ],
  });

/** CONFLICT unless the grant can still be confirmed. */
export function assertConfirmable(row: DelegationRow, nowSecs: number): void {
  const status = effectiveStatus(row, nowSecs);
  if (status !== 'prepared') {
    throw conflict(row.id, `Delegation ${row.id} is ${status}; only a prepared delegation can be confirmed.`);
  }
}

/** How an account not deployed at confirm will be deployed by its first UserOperation. */
export interface AccountDeployment {
  index: bigint;
  factory: Address;
  factoryData: Hex;
}

/** The confirmed owner, and the deployment when the account has no code yet. */
export interface VerifiedOwner {
  owner: Address;
  deployment: AccountDeployment | null;
}

/**
 * Checks `enable_sig` against the account's ECDSA owner and the live nonce (chain reads; call
 * before the transaction). A deployed account's owner is the one its root ECDSA validator stores;
 * an undeployed account must be the counterfactual Kernel account of the claimed `owner` at
 * `index` (0 unless named) on the configured factory, implementation and ECDSA validator.
 */
export async function verifyEnableSignature(
  deps: AppDeps,
  row: DelegationRow,
  enableSig: Hex,
  ownerParam: string | undefined,
  indexParam: string | undefined,
): Promise<VerifiedOwner> {
  const index = BigInt(indexParam ?? '0');
  if (index > UINT256_MAX) throw invalidRequest('Invalid body: index exceeds uint256.');
  const state = await readState(deps, row.chain_id, row.wallet);
  if (state.kernelNonce !== row.kernel_nonce) {
    throw conflict(
      row.id,
      `The account's Kernel nonce moved since prepare (${row.kernel_nonce} → ${state.kernelNonce}); the signed digest can no longer be enabled. Prepare a new delegation.`,
    );
  }
  if (state.domainVersion !== null && state.domainVersion !== row.domain_version) {
    throw conflict(
      row.id,
      `The account now signs as Kernel ${state.domainVersion}, not ${row.domain_version}; prepare a new delegation.`,
    );
  }
  const modules = modulesOf(deps, row.chain_id);
  let verified: VerifiedOwner;
  if (state.deployed) {
    const onChain = await readAccountOwner(
      deps.chain,
      row.chain_id,
      getAddress(row.wallet),
      modules.ecdsaValidator,
    );
    if (!onChain) {
      throw conflict(
        row.id,
        `The account has no owner in the ECDSA root validator ${modules.ecdsaValidator}; only Kernel accounts owned through it can delegate.`,
      );
    }
    if (ownerParam !== undefined && !isAddressEqual(getAddress(ownerParam.toLowerCase()), onChain)) {
      throw invalidRequest("Invalid body: owner is not the account's on-chain owner.");
    }
    verified = { owner: onChain, deployment: null };
  } else {
    if (ownerParam === undefined) {
      throw invalidRequest('Invalid body: owner is required while the account is not deployed.');
    }
    const owner = getAddress(ownerParam.toLowerCase());
    const derived = counterfactualKernelAccount(
      {
        factory: modules.factory,
        implementation: modules.implementation,
        ecdsaValidator: modules.ecdsaValidator,
      },
      owner,
      index,
    );
    if (!isAddressEqual(derived.address, getAddress(row.wallet))) {
      throw invalidRequest(
        `Invalid body: owner and index do not derive this account: the Kernel v3.1 account of ${owner} at index ${index} is ${derived.address}, not ${getAddress(row.wallet)}.`,
        {
          remediation:
            'Send the owner the account was computed for, and its index when it is not 0 (factory ' +
            `${modules.factory}, implementation ${modules.implementation}, ECDSA validator ${modules.ecdsaValidator}).`,
        },
      );
    }
    verified = {
      owner,
      deployment: { index, factory: derived.factory, factoryData: derived.factoryData },
    };
  }
  if (!(await signedBy(row.digest as Hex, enableSig, verified.owner))) {
    throw invalidRequest(`Invalid body: enable_sig is not ${verified.owner}'s signature over the digest.`);
  }
  return verified;
}

/** Activates the prepared grant in `tx` (re-checked under a row lock). */
export async function activate(
  tx: DbExecutor,
  deps: AppDeps,
  actor: DelegationActor,
  id: string,
  enableSig: Hex,
  verified: VerifiedOwner,
): Promise<Delegation> {
  const row = await findDelegation(tx, actor.principal.accountId, id, true);
  if (!row) throw notFound(`Delegation ${id} does not exist on this account.`);
  const now = deps.clock.now();
  assertConfirmable(row, nowSecsOf(deps.clock));
  const changes = {
    status: 'active' as const,
    enable_sig: enableSig.toLowerCase(),
    owner: verified.owner.toLowerCase(),
    account_index: verified.deployment?.index.toString() ?? null,
    factory: verified.deployment?.factory.toLowerCase() ?? null,
    factory_data: verified.deployment?.factoryData.toLowerCase() ?? null,
    confirmed_at: now,
  };
  await updateDelegation(tx, id, changes);
  const updated = { ...row, ...changes };
  await record(tx, deps.clock, actor, 'confirmed', updated);
  return toDelegation(updated, nowSecsOf(deps.clock));
}

export interface Revocation {
  id: string;
  status: 'revoked';
  revocation: {
    uninstall_call: { to: string; data: string };
    invalidate_nonce_call: { to: string; data: string };
    note: string;
  };
}

export const REVOCATION_NOTE =
  'The service no longer honours this grant. To remove it on-chain, the owner sends these calls ' +
  'from the account itself (a userOp validated by the root validator, or an execute self-call): ' +
  'invalidate_nonce_call voids this and every earlier permission and any unused enable signature; ' +
  'uninstall_call removes the permission once it has been installed (it reverts if the grant was ' +
  'never used). The grant cannot sign as the account (ERC-1271 is disabled for it).';

/** The live nonce for the invalidation call, read before the transaction (stored nonce as fallback). */
export async function revocationNonce(deps: AppDeps, row: DelegationRow): Promise<number> {
  try {
    const state = await readState(deps, row.chain_id, row.wallet);
    return Math.max(state.kernelNonce, row.kernel_nonce) + 1;
  } catch {
    return row.kernel_nonce + 1;
  }
}

export async function revoke(
  tx: DbExecutor,
  deps: AppDeps,
  actor: DelegationActor,
  id: string,
  nextNonce: number,
): Promise<Revocation> {
  const row = await findDelegation(tx, actor.principal.accountId, id, true);
  if (!row) throw notFound(`Delegation ${id} does not exist on this account.`);
  if (row.status !== 'prepared' && row.status !== 'active') {
    throw conflict(id, `Delegation ${id} is already ${row.status}.`);
  }
  const changes = { status: 'revoked' as const, revoked_at: deps.clock.now() };
  await updateDelegation(tx, id, changes);
  await record(tx, deps.clock, actor, 'revoked', { ...row, ...changes });
  const calls = revocationCalls(
    getAddress(row.wallet),
    row.validation_id as Hex,
    row.enable_data as Hex,
    nextNonce,
  );
  return { id, status: 'revoked', revocation: { ...calls, note: REVOCATION_NOTE } };
}

/** The renewed scope: same calls and rate limit, from now, for the requested or original duration (≤ 90 days). */
export function renewedScope(
  row: DelegationRow,
  nowSecs: number,
  validUntil: number | undefined,
): StoredScope {
  const startedAt = Math.max(row.valid_after, Math.floor(row.created_at.getTime() / 1000));
  const duration = Math.min(Math.max(row.valid_until - startedAt, 1), RENEWAL_MAX_SECS);
  if (validUntil !== undefined) {
    if (validUntil <= nowSecs)
      throw invalidRequest('Invalid body: valid_until must be in the future (unix seconds).');
    if (validUntil > nowSecs + RENEWAL_MAX_SECS) {
      throw invalidRequest('Invalid body: valid_until may be at most 90 days from now.');
    }
  }
  return { ...row.scope, valid_after: nowSecs, valid_until: validUntil ?? nowSecs + duration };
}

/** CONFLICT unless the grant is active (renewal copies an active grant). */
export function assertRenewable(row: DelegationRow, nowSecs: number): void {
  const status = effectiveStatus(row, nowSecs);
  if (status !== 'active') {
    throw conflict(row.id, `Delegation ${row.id} is ${status}; only an active delegation can be renewed.`);
  }
}

export async function listDelegations(
  db: DbExecutor,
  clock: Clock,
  accountId: string,
  wallet: string | null,
  limit: number,
): Promise<Delegation[]> {
  const rows = await listDelegationRows(db, accountId, wallet?.toLowerCase() ?? null, limit);
  const now = nowSecsOf(clock);
  return rows.map((r) => toDelegation(r, now));
}

/** The job: marks every grant past valid_until expired, with its event and audit fact. */
export async function expireDelegations(db: Db, clock: Clock): Promise<number> {
  return withTransaction(db, async (tx) => {
    const rows = await expireDue(tx, nowSecsOf(clock), clock.now());
    for (const row of rows) await record(tx, clock, null, 'expired', row);
    return rows.length;
  });
}
