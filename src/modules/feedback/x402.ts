// x402 on the wire (protocol reference section 6), versions 1 and 2 side by side:
// - v1: the payment requirements of the 402 body, the `X-PAYMENT` header a client retries with
//   (base64 of a PaymentPayloadV1 JSON) and the `X-PAYMENT-RESPONSE` header of a settled payment;
// - v2: the `PAYMENT-REQUIRED` header of the same 402 (base64 of a PaymentRequired JSON, CAIP-2
//   network ids, `amount`), the `PAYMENT-SIGNATURE` header (base64 of a PaymentPayload that echoes
//   the requirement it accepted) and the `PAYMENT-RESPONSE` header.
// Both carry the same EIP-3009 authorization, so a payment is the same payment in either version.

import { Ajv, type ValidateFunction } from 'ajv';
import { Type, type Static } from 'typebox';
import { AppError } from '../../core/errors/app-error.ts';
import { describeValidationErrors } from '../../core/http/validation.ts';
import { SignedAuthorization, type PaymentTerms } from '../payments/index.ts';

export const X402_VERSION = 1;
export type X402Version = 1 | 2;
/** The message of the 402 body when a request carried no payment (the reference servers' wording). */
export const X402_PAYMENT_REQUIRED_ERROR = 'X-PAYMENT header is required';
/** The `error` of the v2 PaymentRequired header when a request carried no payment. */
export const X402_V2_PAYMENT_REQUIRED_ERROR = 'Payment required';

/** The headers of each version: the payment a client sends, the settlement answer, the 402's. */
export const X402_HEADERS = {
  1: { payment: 'X-PAYMENT', response: 'X-PAYMENT-RESPONSE' },
  2: { payment: 'PAYMENT-SIGNATURE', response: 'PAYMENT-RESPONSE', required: 'PAYMENT-REQUIRED' },
} as const;
/**
 * How long the signed authorization may stay valid (`validBefore = now + maxTimeoutSeconds` in the
 * reference client). Well above PAYMENTS_MIN_VALIDITY_SECONDS, so a signature made now passes.
 */
export const X402_MAX_TIMEOUT_SECONDS = 300;
/** A payment header longer than this is refused unread (a real one is under 2 KB). */
const MAX_HEADER_CHARS = 8192;

/** PaymentRequirementsV1 as this service issues it. */
export interface PaymentRequirementsV1 {
  scheme: 'exact';
  network: string;
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: string;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  extra: { name: string; version: string };
}

/** The x402 v1 402 body (PaymentRequirementsResponse). */
export interface PaymentRequiredBodyV1 {
  x402Version: 1;
  error: string;
  accepts: PaymentRequirementsV1[];
}

export function paymentRequirements(
  terms: PaymentTerms,
  params: { resource: string; amount: bigint; description: string },
): PaymentRequirementsV1 {
  return {
    scheme: 'exact',
    network: terms.network,
    maxAmountRequired: params.amount.toString(),
    resource: params.resource,
    description: params.description,
    mimeType: 'application/json',
    payTo: terms.payee,
    maxTimeoutSeconds: X402_MAX_TIMEOUT_SECONDS,
    asset: terms.asset,
    extra: { name: terms.domain.name, version: terms.domain.version },
  };
}

/** The CAIP-2 id of an EVM chain, as x402 v2 names networks. */
export function caip2Network(chainId: number): `eip155:${number}` {
  return `eip155:${chainId}`;
}

/** PaymentRequirements (x402 v2) as this service issues them. */
export interface PaymentRequirementsV2 {
  scheme: 'exact';
  network: `eip155:${number}`;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: { name: string; version: string };
}

/** The x402 v2 PaymentRequired carried (base64) in the `PAYMENT-REQUIRED` header of a 402. */
export interface PaymentRequiredV2 {
  x402Version: 2;
  error: string;
  resource: { url: string; description: string; mimeType: string };
  accepts: PaymentRequirementsV2[];
}

/** The v2 counterpart of `paymentRequirements`: the same payment, v2 field names and network id. */
export function paymentRequirementsV2(terms: PaymentTerms, amount: bigint): PaymentRequirementsV2 {
  return {
    scheme: 'exact',
    network: caip2Network(terms.chainId),
    amount: amount.toString(),
    asset: terms.asset,
    payTo: terms.payee,
    maxTimeoutSeconds: X402_MAX_TIMEOUT_SECONDS,
    extra: { name: terms.domain.name, version: terms.domain.version },
  };
}

/** The `PAYMENT-REQUIRED` header value of a 402 asking for `params.amount`: standard base64 of the JSON. */
export function paymentRequiredHeader(
  terms: PaymentTerms,
  params: { resource: string; amount: bigint; description: string },
): string {
  const required: PaymentRequiredV2 = {
    x402Version: 2,
    error: X402_V2_PAYMENT_REQUIRED_ERROR,
    resource: { url: params.resource, description: params.description, mimeType: 'application/json' },
    accepts: [paymentRequirementsV2(terms, params.amount)],
  };
  return base64Json(required);
}

/**
 * The part of a PaymentPayloadV1 this service reads. The signed part (`payload`) is strict:
 * an unknown field there is refused. Other top-level members (a client's extensions) are ignored.
 */
const PaymentPayloadV1 = Type.Object({
  x402Version: Type.Literal(1),
  scheme: Type.Literal('exact'),
  network: Type.String({ minLength: 1, maxLength: 64 }),
  payload: SignedAuthorization,
});

/**
 * The part of a PaymentPayload (v2) this service reads: the signed part, strict, and the
 * requirement the client accepted, which must be the one the 402 offered. `resource` and
 * `extensions` are the client's and are not read.
 */
const PaymentPayloadV2 = Type.Object({
  x402Version: Type.Literal(2),
  accepted: Type.Object({
    scheme: Type.Literal('exact'),
    network: Type.String({ minLength: 1, maxLength: 64 }),
    amount: Type.String({ pattern: '^[0-9]{1,78}$' }),
    asset: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }),
    payTo: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }),
    maxTimeoutSeconds: Type.Integer({ minimum: 0 }),
    extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
  payload: SignedAuthorization,
});

/** A decoded payment of either version: the authorization and what it says it pays for. */
export type DecodedPayment =
  | { version: 1; network: string; payload: Static<typeof PaymentPayloadV1>['payload'] }
  | {
      version: 2;
      network: string;
      payload: Static<typeof PaymentPayloadV2>['payload'];
      accepted: Static<typeof PaymentPayloadV2>['accepted'];
    };

const validators = new Map<X402Version, ValidateFunction>();
function payloadValidator(version: X402Version): ValidateFunction {
  let validate = validators.get(version);
  if (!validate) {
    const schema = version === 1 ? PaymentPayloadV1 : PaymentPayloadV2;
    validate = new Ajv({ allErrors: true, strict: false }).compile(schema as object);
    validators.set(version, validate);
  }
  return validate;
}

function invalid(reason: string, message: string, remediation?: string): AppError {
  return new AppError('PAYMENT_INVALID', `${message} (${reason}). Nothing was broadcast or credited.`, {
    ...(remediation ? { remediation } : {}),
  });
}

const RESEND: Record<X402Version, string> = {
  1:
    'Send X-PAYMENT as the standard base64 of the JSON of an x402 v1 PaymentPayload: {x402Version: 1, ' +
    'scheme: "exact", network, payload: {signature, authorization}}, built from the requirements of the 402 body.',
  2:
    'Send PAYMENT-SIGNATURE as the standard base64 of the JSON of an x402 v2 PaymentPayload: {x402Version: 2, ' +
    'accepted, payload: {signature, authorization}}, built from the PAYMENT-REQUIRED header of the 402 answer.',
};

/**
 * Picks the payment of a request: `X-PAYMENT` (v1) or `PAYMENT-SIGNATURE` (v2); null when it
 * carries neither. Both at once is refused: a client speaks one version per request.
 */
export function paymentHeaderOf(
  headers: Record<string, string | string[] | undefined>,
): { version: X402Version; header: string | string[] } | null {
  const v1 = headers['x-payment'];
  const v2 = headers['payment-signature'];
  if (v1 !== undefined && v2 !== undefined) {
    throw invalid(
      'invalid_payload',
      'The request carries both X-PAYMENT and PAYMENT-SIGNATURE',
      'Send one payment: PAYMENT-SIGNATURE for x402 v2, X-PAYMENT for x402 v1.',
    );
  }
  if (v2 !== undefined) return { version: 2, header: v2 };
  if (v1 !== undefined) return { version: 1, header: v1 };
  return null;
}

/**
 * Decodes a payment header of `version` (`X-PAYMENT` for 1, `PAYMENT-SIGNATURE` for 2). Throws
 * PAYMENT_INVALID naming what is wrong (not base64, not JSON, a payload of the other version or
 * another scheme, a malformed payload); nothing is read from the chain. What it pays for is
 * checked against the terms by `checkPaymentTerms`.
 */
export function decodePaymentHeader(header: string | string[], version: X402Version): DecodedPayment {
  const name = X402_HEADERS[version].payment;
  const resend = RESEND[version];
  if (Array.isArray(header) || header.includes(',')) {
    throw invalid('invalid_payload', `The request carries more than one ${name} header`, resend);
  }
  const text = header.trim();
  if (text.length === 0 || text.length > MAX_HEADER_CHARS) {
    throw invalid(
      'invalid_payload',
      `The ${name} header must be 1 to ${MAX_HEADER_CHARS} characters`,
      resend,
    );
  }
  // Standard base64 (RFC 4648 section 4), padding optional; anything else is refused, not guessed at.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.replace(/=+$/, '').length % 4 === 1) {
    throw invalid('invalid_payload', `The ${name} header is not standard base64`, resend);
  }
  let json: string;
  try {
    json = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(text, 'base64'));
  } catch {
    throw invalid('invalid_payload', `The ${name} header does not decode to UTF-8 text`, resend);
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw invalid('invalid_payload', `The ${name} header does not decode to JSON`, resend);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('invalid_payload', `The ${name} header does not decode to a JSON object`, resend);
  }
  const record = value as Record<string, unknown>;
  if (record['x402Version'] !== version) {
    const other = version === 1 ? X402_HEADERS[2].payment : X402_HEADERS[1].payment;
    throw invalid(
      'invalid_x402_version',
      `The ${name} header carries an x402 version ${JSON.stringify(record['x402Version'] ?? null)} payment; ` +
        `${name} is for version ${version}`,
      `Send an x402 version ${version} payment in ${name}, or a version ${version === 1 ? 2 : 1} payment in ${other}.`,
    );
  }
  const scheme =
    version === 1 ? record['scheme'] : (record['accepted'] as Record<string, unknown> | null)?.['scheme'];
  if (scheme !== 'exact') {
    throw invalid(
      'unsupported_scheme',
      `The payment scheme ${JSON.stringify(scheme ?? null)} is not offered; only "exact" is`,
      'Pay with the "exact" scheme (an EIP-3009 authorization), as the 402 answer requires.',
    );
  }
  const validate = payloadValidator(version);
  if (!validate(value)) {
    const detail = describeValidationErrors(validate.errors ?? [], name).replace(/\.$/, '');
    throw invalid('invalid_payload', detail, resend);
  }
  if (version === 1) {
    const v1 = value as Static<typeof PaymentPayloadV1>;
    return { version: 1, network: v1.network, payload: v1.payload };
  }
  const v2 = value as Static<typeof PaymentPayloadV2>;
  return { version: 2, network: v2.accepted.network, payload: v2.payload, accepted: v2.accepted };
}

/** The network id of the payments chain in `version`'s terms: a v1 name or a CAIP-2 id. */
export function networkOf(terms: PaymentTerms, version: X402Version): string {
  return version === 1 ? terms.network : caip2Network(terms.chainId);
}

/**
 * Refuses a payment for another network than the one this service settles on and, in v2, one
 * whose accepted requirement is not the one offered (the asset, the payee, exactly `amount`).
 * The authorization itself is verified afterwards, the same way in both versions.
 */
export function checkPaymentTerms(payment: DecodedPayment, terms: PaymentTerms, amount: bigint): void {
  const network = networkOf(terms, payment.version);
  if (payment.network !== network) {
    throw invalid(
      'invalid_network',
      `The payment is for network "${payment.network}"; this service settles on "${network}"`,
      `Sign for network "${network}" (chain ${terms.chainId}), as the 402 answer requires.`,
    );
  }
  if (payment.version !== 2) return;
  const accepted = payment.accepted;
  const offered = paymentRequirementsV2(terms, amount);
  const differs: string[] = [];
  if (accepted.asset.toLowerCase() !== offered.asset.toLowerCase()) differs.push(`asset ${accepted.asset}`);
  if (accepted.payTo.toLowerCase() !== offered.payTo.toLowerCase()) differs.push(`payTo ${accepted.payTo}`);
  if (accepted.amount !== offered.amount) differs.push(`amount ${accepted.amount}`);
  if (differs.length > 0) {
    throw invalid(
      differs.some((d) => d.startsWith('amount'))
        ? 'invalid_exact_evm_payload_authorization_value_mismatch'
        : 'invalid_payment_requirements',
      `The accepted requirement is not the one offered (${differs.join(', ')}; offered: ${offered.amount} of ` +
        `${offered.asset} to ${offered.payTo})`,
      'Accept the requirement of the PAYMENT-REQUIRED header as it is, and sign exactly its amount.',
    );
  }
}

/** The settlement answer of a settled payment (SettlementResponse v1, SettleResponse v2). */
export interface SettlementResponse {
  success: true;
  transaction: string;
  /** The network as the payment's version names it. */
  network: string;
  payer: string;
}

/** A settlement answer header value: standard base64 of the JSON. */
export function encodePaymentResponseHeader(response: SettlementResponse): string {
  return base64Json(response);
}

function base64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}
