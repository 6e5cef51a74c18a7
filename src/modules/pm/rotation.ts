// Rotating the signer of a Safe funder (docs/prediction-markets.md, "Rotating a Safe signer"): the
// swapOwner calldata the Safe must execute, with prevOwner taken from the live owner list. Purser
// never submits it; the caller executes it, stores a credential with the new key and revokes the
// old one.

import { encodeFunctionData, getAddress, type Address, type Hex } from 'viem';
import type { ChainPort } from '../../adapters/chain/port.ts';
import { SAFE_ABI, SAFE_SENTINEL_OWNERS } from '../../adapters/safe/safe-tx.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import { AppError, invalidRequest, unavailable } from '../../core/errors/app-error.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { noActiveCredential } from './credentials.ts';
import { getCredentialMeta } from './store.ts';

export const ROTATION_POLICY =
  'Rotate the signer of a funder Safe at least every 90 days, at once after any security.alert on its ' +
  'credential, and whenever someone who saw the key leaves. Purser recommends the cadence and does not ' +
  'enforce it: it never submits the swap, and the stored key keeps working until you revoke it.';

export interface RotationCalldata {
  credential_id: string;
  venue: 'polymarket';
  funder: Address;
  old_owner: Address;
  new_owner: Address;
  prev_owner: Address;
  call: { to: Address; data: Hex; value: '0' };
  sequence: string[];
  rotation_policy: string;
}

function notRotatable(message: string): AppError {
  return new AppError('NOT_APPLICABLE', message, {
    remediation:
      'Only a polymarket credential of signature type 2 whose signer owns its Safe funder rotates here.',
    next: [{ method: 'GET', path: '/v1/pm/credentials', why: 'the credentials and their signature types' }],
  });
}

export async function rotationCalldata(
  db: DbExecutor,
  chain: ChainPort,
  chainId: number,
  accountId: string,
  credentialId: string,
  newOwnerRaw: string,
  deadline: Deadline,
): Promise<RotationCalldata> {
  const row = await getCredentialMeta(db, accountId, credentialId);
  if (!row || row.revoked_at !== null) throw noActiveCredential(credentialId);
  const meta = (row.meta ?? {}) as { signature_type?: number };
  if (row.venue !== 'polymarket')
    throw notRotatable(`A ${row.venue} credential has no Safe owner to rotate.`);
  if (meta.signature_type !== 2 || !row.funder || !row.signer_address) {
    throw notRotatable(
      `This credential's funder is not a Safe (signature type ${String(meta.signature_type)}); only type 2 rotates by swapOwner.`,
    );
  }
  const funder = getAddress(row.funder);
  const oldOwner = getAddress(row.signer_address);
  const newOwner = getAddress(newOwnerRaw);
  if (
    newOwner === SAFE_SENTINEL_OWNERS ||
    newOwner === '0x0000000000000000000000000000000000000000' ||
    newOwner === funder
  ) {
    throw invalidRequest(
      'new_owner: cannot be the zero address, the owner-list sentinel or the Safe itself.',
    );
  }
  deadline.check('reading the Safe owners');
  let owners: readonly Address[];
  try {
    owners = await chain
      .publicClient(chainId)
      .readContract({ address: funder, abi: SAFE_ABI, functionName: 'getOwners' });
  } catch (err) {
    throw unavailable(`The chain ${chainId} RPC did not answer: ${(err as Error).message.split('\n')[0]}`, {
      remediation: 'Retry in a few seconds.',
      next: [],
    });
  }
  const list = owners.map((o) => getAddress(o));
  const i = list.indexOf(oldOwner);
  if (i < 0) {
    throw notRotatable(
      `The credential's signer ${oldOwner} is not an owner of the Safe ${funder} now (it has ${list.length} owners).`,
    );
  }
  if (list.includes(newOwner)) {
    throw notRotatable(
      `${newOwner} is an owner of the Safe ${funder} already; swapOwner would revert (GS204).`,
    );
  }
  const prevOwner = i === 0 ? SAFE_SENTINEL_OWNERS : list[i - 1]!;
  return {
    credential_id: row.id,
    venue: 'polymarket',
    funder,
    old_owner: oldOwner,
    new_owner: newOwner,
    prev_owner: prevOwner,
    call: {
      to: funder,
      data: encodeFunctionData({
        abi: SAFE_ABI,
        functionName: 'swapOwner',
        args: [prevOwner, oldOwner, newOwner],
      }),
      value: '0',
    },
    sequence: [
      `Execute call from the Safe ${funder}: a Safe transaction (to the Safe itself, value 0, operation CALL) ` +
        "signed by the Safe's threshold of owners. prev_owner is read from the live owner list: if the owners " +
        'change before it runs, ask for the calldata again.',
      `Derive or create the CLOB API key of ${newOwner} and store it: POST /v1/pm/credentials with ` +
        `signature_type 2, funder ${funder} and the new signer.`,
      `Revoke this credential: DELETE /v1/pm/credentials/${row.id}.`,
      `Delete the old signer's API key at the CLOB (DELETE /auth/api-key as ${oldOwner}) and retire the old key.`,
    ],
    rotation_policy: ROTATION_POLICY,
  };
}
