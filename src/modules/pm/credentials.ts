// Venue trade credentials (docs/prediction-markets.md): checked against the venue, sealed at rest
// under the sealing keyring bound to account, venue and credential id, write-only, and opened
// only for trading operations (usage.ts), each use audited and watched.

import { isAddress, type Address, type Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import type { Clock } from '../../core/clock.ts';
import type { DbExecutor } from '../../core/db/database.ts';
import type { AppError } from '../../core/errors/app-error.ts';
import { invalidRequest, notFound, unavailable } from '../../core/errors/app-error.ts';
import { actorName, type Actor } from '../../core/http/actor.ts';
import type { Deadline } from '../../core/http/deadline.ts';
import { newUuid } from '../../core/ids.ts';
import { venueCredentialContext, type SealingKeyring } from '../../core/sealing.ts';
import {
  VenueRejected,
  VenueUnavailable,
  type ClobApiCredentials,
  type PmVenue,
  type PmVenuePorts,
} from '../../adapters/pm-venue/port.ts';
import { validateKalshiKeyId, validateKalshiPrivateKey } from '../../adapters/pm-venue/kalshi.ts';
import { recordAudit } from '../audit/index.ts';
import { venueSwitchRefusal } from '../switches/index.ts';
import {
  getCredentialMeta,
  insertCredential,
  listCredentials,
  revokeCredentials,
  type CredentialFlow,
  type CredentialMetaRow,
} from './store.ts';
import type { CredentialMaterial, UsageWatchSettings } from './types.ts';
import { noteUse } from './usage.ts';

export interface CredentialDeps {
  clock: Clock;
  keyring: SealingKeyring;
  /** Absent: no venue is configured here (503 on intake). */
  venues: PmVenuePorts | null;
  watch: UsageWatchSettings;
}

/** Polymarket's signature types (protocols.md 8.3); 3 (POLY_1271) is not supported here. */
export const SIGNATURE_TYPES = { 0: 'EOA', 1: 'POLY_PROXY', 2: 'POLY_GNOSIS_SAFE' } as const;
export type SignatureType = keyof typeof SIGNATURE_TYPES;

/** The request body of POST /v1/pm/credentials (schemas.ts validates the shapes). */
export interface StoreCredentialBody {
  venue: PmVenue;
  label?: string | null | undefined;
  signature_type?: number | undefined;
  funder?: string | undefined;
  signer_address?: string | undefined;
  signer_key?: string | undefined;
  api_key?: string | undefined;
  api_secret?: string | undefined;
  api_passphrase?: string | undefined;
  api_nonce?: number | undefined;
  private_key_pem?: string | undefined;
}

/** The credential as every endpoint shows it: metadata only (spec section 2). */
export interface CredentialView {
  id: string;
  venue: PmVenue;
  label: string | null;
  meta: Record<string, unknown>;
  created_at: string;
  revoked_at: string | null;
}

/** A credential the venue accepted, ready to be stored. */
export interface VettedCredential {
  id: string;
  venue: PmVenue;
  label: string | null;
  flow: CredentialFlow;
  meta: Record<string, unknown>;
  signerAddress: string | null;
  funder: string | null;
  material: CredentialMaterial;
}

export function credentialView(row: CredentialMetaRow): CredentialView {
  const meta = { ...((row.meta ?? {}) as Record<string, unknown>) };
  meta.last_used_at = row.last_used_at ? new Date(row.last_used_at).toISOString() : null;
  return {
    id: row.id,
    venue: row.venue,
    label: row.label,
    meta,
    created_at: new Date(row.created_at).toISOString(),
    revoked_at: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
  };
}

/** The last four characters of a key id, for display ("…1a2b"). */
function hint(value: string): string {
  return `…${value.slice(-4)}`;
}

const POLYMARKET_ONLY = [
  'signature_type',
  'funder',
  'signer_address',
  'signer_key',
  'api_secret',
  'api_passphrase',
  'api_nonce',
] as const;

function refuseFields(
  body: StoreCredentialBody,
  fields: readonly (keyof StoreCredentialBody)[],
  venue: string,
): void {
  const present = fields.filter((f) => body[f] !== undefined);
  if (present.length > 0) {
    throw invalidRequest(`${present.join(', ')}: not used for ${venue} credentials.`, {
      remediation: `Remove ${present.join(', ')}; see docs/prediction-markets.md for the ${venue} body.`,
    });
  }
}

/**
 * Checks the body beyond its shapes, the sealing key, the intake switch and the venue's answer,
 * outside any transaction (the venue is asked over the network). Nothing is stored here.
 */
export async function vetCredential(
  db: DbExecutor,
  deps: CredentialDeps,
  body: StoreCredentialBody,
  deadline: Deadline,
): Promise<VettedCredential> {
  const id = newUuid();
  const label = body.label ?? null;
  // Shapes and cross-field rules first: a 400 names the field and never echoes a value.
  const shaped = body.venue === 'polymarket' ? polymarketShape(body) : kalshiShape(body);
  if (!deps.keyring.confidential) {
    throw unavailable('Sealing is not configured here, so venue credentials cannot be stored.', {
      remediation:
        'The operator sets PURSER_SEALING_KEYS (id:32-byte key); development without it seals nothing secret.',
      next: [],
    });
  }
  if (shaped.hosted) await assertIntakeOn(db);
  if (!deps.venues) {
    throw unavailable(`No ${body.venue} venue is configured here.`, {
      remediation: 'The operator configures the venue URLs (docs/operations.md); retry later.',
      next: [],
    });
  }
  deadline.check(`asking ${body.venue} about the credential`);
  try {
    if (shaped.venue === 'polymarket') {
      const { signerAddress, signerKey, funder, signatureType } = shaped;
      let creds = shaped.creds;
      if (!creds) {
        creds = await deps.venues.polymarket.deriveApiCredentials(signerKey!, body.api_nonce ?? 0);
      } else {
        const check = await deps.venues.polymarket.checkApiCredentials(signerAddress, creds);
        if (!check.ok) throw venueRefused('polymarket', check.reason);
      }
      return {
        id,
        venue: 'polymarket',
        label,
        flow: signerKey ? 'hosted' : 'client_signed',
        meta: {
          flow: signerKey ? 'hosted' : 'client_signed',
          signature_type: signatureType,
          signature_type_name: SIGNATURE_TYPES[signatureType],
          signer_address: signerAddress,
          funder,
          api_key_hint: hint(creds.apiKey),
        },
        signerAddress,
        funder,
        material: {
          venue: 'polymarket',
          api_key: creds.apiKey,
          api_secret: creds.secret,
          api_passphrase: creds.passphrase,
          ...(signerKey ? { signer_key: signerKey } : {}),
        },
      };
    }
    const check = await deps.venues.kalshi.checkApiKey({ keyId: shaped.keyId, privateKeyPem: shaped.pem });
    if (!check.ok) throw venueRefused('kalshi', check.reason);
    return {
      id,
      venue: 'kalshi',
      label,
      flow: 'hosted',
      meta: { flow: 'hosted', api_key_hint: hint(shaped.keyId) },
      signerAddress: null,
      funder: null,
      material: { venue: 'kalshi', api_key: shaped.keyId, private_key_pem: shaped.pem },
    };
  } catch (err) {
    if (err instanceof VenueRejected) throw venueRefused(body.venue, err.message);
    if (err instanceof VenueUnavailable) {
      throw unavailable(`${body.venue} could not be asked about the credential: ${err.message}`, {
        remediation: 'Nothing was stored. Retry in a minute.',
        next: [],
      });
    }
    throw err;
  }
}

type Shaped =
  | {
      venue: 'polymarket';
      hosted: boolean;
      signatureType: SignatureType;
      signerAddress: Address;
      signerKey: Hex | null;
      funder: Address;
      creds: ClobApiCredentials | null;
    }
  | { venue: 'kalshi'; hosted: true; keyId: string; pem: string };

function polymarketShape(body: StoreCredentialBody): Shaped {
  refuseFields(body, ['private_key_pem'], 'polymarket');
  if (body.signature_type === undefined) {
    throw invalidRequest(
      'signature_type: required for polymarket (0 EOA, 1 POLY_PROXY, 2 POLY_GNOSIS_SAFE).',
    );
  }
  if (!(body.signature_type in SIGNATURE_TYPES)) {
    throw invalidRequest(
      'signature_type: must be 0 (EOA), 1 (POLY_PROXY) or 2 (POLY_GNOSIS_SAFE); 3 (POLY_1271) is not supported.',
    );
  }
  const signatureType = body.signature_type as SignatureType;
  let signerKey: Hex | null = null;
  let signerAddress: Address | null = null;
  if (body.signer_key !== undefined) {
    signerKey = body.signer_key.toLowerCase() as Hex;
    try {
      signerAddress = privateKeyToAddress(signerKey).toLowerCase() as Address;
    } catch {
      throw invalidRequest('signer_key: not a valid secp256k1 private key.');
    }
  }
  if (body.signer_address !== undefined) {
    const declared = body.signer_address.toLowerCase() as Address;
    if (signerAddress && declared !== signerAddress) {
      throw invalidRequest('signer_address: does not match the address of signer_key.');
    }
    signerAddress = declared;
  }
  if (!signerAddress) {
    throw invalidRequest(
      'signer_key or signer_address: one is required (signer_key for the hosted flow, signer_address for the client-signed flow).',
    );
  }
  const apiFields = [body.api_key, body.api_secret, body.api_passphrase];
  const given = apiFields.filter((f) => f !== undefined).length;
  if (given !== 0 && given !== 3) {
    throw invalidRequest(
      'api_key, api_secret, api_passphrase: give all three, or none to derive them with signer_key.',
    );
  }
  if (given === 0 && !signerKey) {
    throw invalidRequest(
      'api_key, api_secret, api_passphrase: required without signer_key (the L2 credential cannot be derived).',
    );
  }
  if (given === 3 && body.api_nonce !== undefined) {
    throw invalidRequest('api_nonce: only used when the L2 credential is derived (no api_key given).');
  }
  let funder: Address;
  if (signatureType === 0) {
    if (body.funder !== undefined && body.funder.toLowerCase() !== signerAddress) {
      throw invalidRequest('funder: for signature type 0 (EOA) the funder is the signer itself; omit it.');
    }
    funder = signerAddress;
  } else {
    if (body.funder === undefined) {
      throw invalidRequest(
        `funder: required for signature type ${signatureType} (the proxy or Safe that holds the funds).`,
      );
    }
    funder = body.funder.toLowerCase() as Address;
    if (funder === signerAddress) {
      throw invalidRequest(
        `funder: for signature type ${signatureType} the funder is a wallet of its own, not the signer.`,
      );
    }
  }
  if (!isAddress(funder, { strict: false })) throw invalidRequest('funder: not an address.');
  return {
    venue: 'polymarket',
    hosted: signerKey !== null,
    signatureType,
    signerAddress,
    signerKey,
    funder,
    creds:
      given === 3
        ? { apiKey: body.api_key!, secret: body.api_secret!, passphrase: body.api_passphrase! }
        : null,
  };
}

function kalshiShape(body: StoreCredentialBody): Shaped {
  refuseFields(body, POLYMARKET_ONLY, 'kalshi');
  if (body.api_key === undefined) throw invalidRequest('api_key: required for kalshi (the API key id).');
  if (body.private_key_pem === undefined) {
    throw invalidRequest('private_key_pem: required for kalshi (the RSA private key of the API key, PEM).');
  }
  const keyId = validateKalshiKeyId(body.api_key);
  if (!keyId.ok) throw invalidRequest(`api_key: ${keyId.reason}.`);
  const pem = validateKalshiPrivateKey(body.private_key_pem);
  if (!pem.ok) throw invalidRequest(`private_key_pem: ${pem.reason}.`);
  return { venue: 'kalshi', hosted: true, keyId: body.api_key, pem: body.private_key_pem };
}

function venueRefused(venue: string, reason: string): AppError {
  return invalidRequest(`${venue} rejected the credential: ${reason}`, {
    remediation: 'Nothing was stored. Check the key, secret and passphrase (or the signer key) and retry.',
  });
}

/** Hosted signer-key intake can be switched off by the operator (`credential_intake`). */
async function assertIntakeOn(db: DbExecutor): Promise<void> {
  const refusal = await venueSwitchRefusal(db, 'credential_intake');
  if (refusal) throw refusal;
}

/** Stores a vetted credential, sealed, with its audit fact and its first use's network. */
export async function storeCredential(
  tx: DbExecutor,
  deps: CredentialDeps,
  accountId: string,
  actor: Actor,
  vetted: VettedCredential,
): Promise<CredentialView> {
  const now = deps.clock.now();
  const sealed = deps.keyring.seal(
    venueCredentialContext(accountId, vetted.venue, vetted.id),
    JSON.stringify(vetted.material),
  );
  const row = await insertCredential(tx, {
    id: vetted.id,
    account_id: accountId,
    venue: vetted.venue,
    label: vetted.label,
    flow: vetted.flow,
    meta: vetted.meta,
    signer_address: vetted.signerAddress,
    funder: vetted.funder,
    sealed,
    created_at: now,
  });
  await recordAudit(tx, deps.clock, {
    accountId,
    actor: actorName(actor),
    action: 'venue_credential.store',
    subject: vetted.id,
    details: { venue: vetted.venue, flow: vetted.flow, sealing_key: deps.keyring.currentId },
    network: actor.network,
  });
  // Checking it against the venue was its first use.
  await noteUse(tx, deps, {
    accountId,
    credentialId: vetted.id,
    venue: vetted.venue,
    operation: 'authenticate',
    actor,
  });
  const stored = await getCredentialMeta(tx, accountId, row.id);
  return credentialView(stored!);
}

export async function listCredentialViews(
  db: DbExecutor,
  accountId: string,
  options: { limit: number; offset: number; includeRevoked: boolean },
): Promise<CredentialView[]> {
  return (await listCredentials(db, accountId, options)).map(credentialView);
}

/** Revokes one active credential: its ciphertext is overwritten in the same statement. */
export async function revokeCredential(
  tx: DbExecutor,
  clock: Clock,
  accountId: string,
  actor: Actor,
  id: string,
): Promise<CredentialView> {
  const [row] = await revokeCredentials(tx, accountId, id, clock.now());
  if (!row) throw noActiveCredential(id);
  await recordAudit(tx, clock, {
    accountId,
    actor: actorName(actor),
    action: 'venue_credential.revoke',
    subject: id,
    details: { venue: row.venue, ciphertext_destroyed: true },
    network: actor.network,
  });
  return credentialView(row);
}

/**
 * Offboarding, in the caller's transaction: every active credential of the account is revoked and
 * its ciphertext overwritten. Returns how many were zeroed.
 */
export async function zeroAccountCredentials(tx: DbExecutor, accountId: string, now: Date): Promise<number> {
  return (await revokeCredentials(tx, accountId, null, now)).length;
}

export function noActiveCredential(id: string): AppError {
  return notFound(`This account has no active venue credential ${id}.`, {
    remediation:
      'List the active credentials with GET /v1/pm/credentials; a revoked credential cannot be used again.',
    next: [{ method: 'GET', path: '/v1/pm/credentials', why: 'the active credentials' }],
  });
}
