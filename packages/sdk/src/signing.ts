// The signatures an agent makes for the API, from what the API itself answers: a prepaid top-up
// (EIP-3009 TransferWithAuthorization from the top-up terms), an x402 payment in version 1 or 2
// (the same authorization, from a 402's requirements) and a delegation's enable signature (its
// typed data).

import { getAddress, toHex, type Hex, type LocalAccount, type TypedDataDefinition } from 'viem';
import type { components } from './schema.ts';

export type TopupTerms = components['schemas']['TopupTerms'];
export type SignedAuthorization = components['schemas']['SignedAuthorization'];

/** The EIP-3009 types (EIP712Domain left out, as signTypedData wants). */
const TRANSFER_WITH_AUTHORIZATION = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

interface AuthorizationRequest {
  domain: { name: string; version: string; chainId: number; verifyingContract: string };
  to: string;
  value: bigint;
  validForSeconds: number;
}

function randomNonce(): Hex {
  return toHex(crypto.getRandomValues(new Uint8Array(32)));
}

async function signAuthorization(
  account: LocalAccount,
  request: AuthorizationRequest,
): Promise<SignedAuthorization> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = {
    from: account.address,
    to: getAddress(request.to),
    value: request.value,
    // A little in the past: the chain's clock may trail this one.
    validAfter: now - 600n,
    validBefore: now + BigInt(request.validForSeconds),
    nonce: randomNonce(),
  };
  const signature = await account.signTypedData({
    domain: { ...request.domain, verifyingContract: getAddress(request.domain.verifyingContract) },
    types: TRANSFER_WITH_AUTHORIZATION,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  return {
    authorization: {
      from: message.from,
      to: message.to,
      value: message.value.toString(),
      validAfter: message.validAfter.toString(),
      validBefore: message.validBefore.toString(),
      nonce: message.nonce,
    },
    signature,
  };
}

/**
 * The body of POST /v1/balance/topups: an authorization for `value` USDC base units to the terms'
 * payee, valid for an hour (or `validForSeconds`, at least the terms' minimum).
 */
export function signTopUp(
  account: LocalAccount,
  terms: TopupTerms,
  options: { value: bigint | string; validForSeconds?: number },
): Promise<SignedAuthorization> {
  return signAuthorization(account, {
    domain: terms.eip712_domain,
    to: terms.pay_to,
    value: BigInt(options.value),
    validForSeconds: Math.max(options.validForSeconds ?? 3600, terms.min_validity_seconds + 60),
  });
}

/** One entry of an x402 v1 402 answer's `accepts`. */
export interface PaymentRequirementsV1 {
  scheme: string;
  network: string;
  maxAmountRequired: string;
  payTo: string;
  asset: string;
  maxTimeoutSeconds: number;
  extra?: { name?: string; version?: string };
}

/** x402 v1 network names and their chains. */
const X402_CHAINS: Record<string, number> = { base: 8453, 'base-sepolia': 84532, polygon: 137 };

/**
 * The `X-PAYMENT` header value that pays a 402: given the 402's body (or one of its `accepts`),
 * signs the exact-scheme authorization it asks for. Retry the same request with this header.
 */
export async function signX402Payment(
  account: LocalAccount,
  required: { accepts: PaymentRequirementsV1[] } | PaymentRequirementsV1,
): Promise<string> {
  const req = 'accepts' in required ? required.accepts.find((a) => a.scheme === 'exact') : required;
  if (!req) throw new Error('The 402 answer offers no exact-scheme payment.');
  const chainId = X402_CHAINS[req.network];
  if (chainId === undefined) throw new Error(`Unknown x402 network ${req.network}.`);
  if (!req.extra?.name || !req.extra.version)
    throw new Error('The requirements lack the token EIP-712 name and version (extra).');
  const payload = await signAuthorization(account, {
    domain: { name: req.extra.name, version: req.extra.version, chainId, verifyingContract: req.asset },
    to: req.payTo,
    value: BigInt(req.maxAmountRequired),
    validForSeconds: req.maxTimeoutSeconds,
  });
  const json = JSON.stringify({ x402Version: 1, scheme: 'exact', network: req.network, payload });
  return Buffer.from(json, 'utf8').toString('base64');
}

/** One entry of an x402 v2 PaymentRequired's `accepts` (the 402's `PAYMENT-REQUIRED` header). */
export interface PaymentRequirementsV2 {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: { name?: string; version?: string };
}

/**
 * The `PAYMENT-SIGNATURE` header value (x402 v2, exact scheme) that pays a 402, from its
 * `PAYMENT-REQUIRED` header (`PurserError.paymentRequired`). Retry the same request with it.
 */
export async function signX402PaymentV2(account: LocalAccount, paymentRequired: string): Promise<string> {
  const required = JSON.parse(Buffer.from(paymentRequired, 'base64').toString('utf8')) as {
    x402Version?: number;
    resource?: unknown;
    accepts?: PaymentRequirementsV2[];
  };
  if (required.x402Version !== 2) throw new Error('The PAYMENT-REQUIRED header is not x402 version 2.');
  const accepted = required.accepts?.find((a) => a.scheme === 'exact' && /^eip155:\d+$/.test(a.network));
  if (!accepted) throw new Error('The 402 answer offers no exact-scheme payment on an EVM chain.');
  if (!accepted.extra?.name || !accepted.extra.version)
    throw new Error('The requirements lack the token EIP-712 name and version (extra).');
  const payload = await signAuthorization(account, {
    domain: {
      name: accepted.extra.name,
      version: accepted.extra.version,
      chainId: Number(accepted.network.slice('eip155:'.length)),
      verifyingContract: accepted.asset,
    },
    to: accepted.payTo,
    value: BigInt(accepted.amount),
    validForSeconds: accepted.maxTimeoutSeconds,
  });
  const json = JSON.stringify({ x402Version: 2, resource: required.resource, accepted, payload });
  return Buffer.from(json, 'utf8').toString('base64');
}

/**
 * The owner's `enable_sig` for POST /v1/delegations/{id}/confirm: a signature of the prepared
 * delegation's typed data (the digest the Kernel account checks), by the account's ECDSA owner.
 */
export function signDelegation(owner: LocalAccount, delegation: { typed_data: unknown }): Promise<Hex> {
  return owner.signTypedData(delegation.typed_data as TypedDataDefinition);
}

/** What an approver signs: an intent's `report.approval` (its typed data), as the API gives it. */
export interface ApprovalRequest {
  typed_data: unknown;
}

interface ApprovalTypedData {
  domain: { name: string; version: string; chainId: number };
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/**
 * An approver's EIP-712 signature over an intent's approval (`report.approval` of an intent that
 * waits), for POST /v1/intents/{id}/approvals. The API writes integers as decimal strings; they
 * are signed as the integers they are.
 */
export async function signApproval(account: LocalAccount, approval: ApprovalRequest): Promise<Hex> {
  const typed = approval.typed_data as ApprovalTypedData;
  const fields = typed.types[typed.primaryType] ?? [];
  const message = Object.fromEntries(
    Object.entries(typed.message).map(([name, value]) => {
      const type = fields.find((f) => f.name === name)?.type ?? '';
      return [name, /^u?int\d*$/.test(type) ? BigInt(value as string) : value];
    }),
  );
  return account.signTypedData({
    domain: typed.domain,
    types: typed.types,
    primaryType: typed.primaryType,
    message,
  } as unknown as TypedDataDefinition);
}
