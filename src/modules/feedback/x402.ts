// x402 v1 on the wire (protocol reference section 6): the payment requirements of a 402 body,
// the `X-PAYMENT` header a client retries with (base64 of a PaymentPayloadV1 JSON), and the
// `X-PAYMENT-RESPONSE` header of a settled payment (base64 of a SettlementResponseV1 JSON).

import { Ajv, type ValidateFunction } from 'ajv';
import { Type, type Static } from 'typebox';
import { AppError } from '../../core/errors/app-error.ts';
import { describeValidationErrors } from '../../core/http/validation.ts';
import { SignedAuthorization, type PaymentTerms } from '../payments/index.ts';

export const X402_VERSION = 1;
/** The message of the 402 body when a request carried no payment (the reference servers' wording). */
export const X402_PAYMENT_REQUIRED_ERROR = 'X-PAYMENT header is required';
/**
 * How long the signed authorization may stay valid (`validBefore = now + maxTimeoutSeconds` in the
 * reference client). Well above PAYMENTS_MIN_VALIDITY_SECONDS, so a signature made now passes.
 */
export const X402_MAX_TIMEOUT_SECONDS = 300;
/** An `X-PAYMENT` header longer than this is refused unread (a real one is under 1 KB). */
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
export type DecodedPaymentPayload = Static<typeof PaymentPayloadV1>;

let validatePayload: ValidateFunction | undefined;
function payloadValidator(): ValidateFunction {
  validatePayload ??= new Ajv({ allErrors: true, strict: false }).compile(PaymentPayloadV1 as object);
  return validatePayload;
}

function invalid(reason: string, message: string, remediation?: string): AppError {
  return new AppError('PAYMENT_INVALID', `${message} (${reason}). Nothing was broadcast or credited.`, {
    ...(remediation ? { remediation } : {}),
  });
}

const RESEND =
  'Send X-PAYMENT as the standard base64 of the JSON of an x402 v1 PaymentPayload: {x402Version: 1, ' +
  'scheme: "exact", network, payload: {signature, authorization}}, built from the requirements of the 402 answer.';

/**
 * Decodes an `X-PAYMENT` header. Throws PAYMENT_INVALID naming what is wrong (not base64, not
 * JSON, another x402 version or scheme, a malformed payload); nothing is read from the chain.
 * The network is checked against the terms by the caller (`invalid_network`).
 */
export function decodePaymentHeader(header: string | string[]): DecodedPaymentPayload {
  if (Array.isArray(header) || header.includes(',')) {
    throw invalid('invalid_payload', 'The request carries more than one X-PAYMENT header', RESEND);
  }
  const text = header.trim();
  if (text.length === 0 || text.length > MAX_HEADER_CHARS) {
    throw invalid(
      'invalid_payload',
      `The X-PAYMENT header must be 1 to ${MAX_HEADER_CHARS} characters`,
      RESEND,
    );
  }
  // Standard base64 (RFC 4648 section 4), padding optional; anything else is refused, not guessed at.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.replace(/=+$/, '').length % 4 === 1) {
    throw invalid('invalid_payload', 'The X-PAYMENT header is not standard base64', RESEND);
  }
  let json: string;
  try {
    json = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(text, 'base64'));
  } catch {
    throw invalid('invalid_payload', 'The X-PAYMENT header does not decode to UTF-8 text', RESEND);
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw invalid('invalid_payload', 'The X-PAYMENT header does not decode to JSON', RESEND);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('invalid_payload', 'The X-PAYMENT header does not decode to a JSON object', RESEND);
  }
  const record = value as Record<string, unknown>;
  if (record['x402Version'] !== X402_VERSION) {
    throw invalid(
      'invalid_x402_version',
      `The payment is x402 version ${JSON.stringify(record['x402Version'] ?? null)}; this endpoint speaks version 1`,
      'Pay with an x402 v1 client (X-PAYMENT header), using the requirements of the 402 answer.',
    );
  }
  if (record['scheme'] !== 'exact') {
    throw invalid(
      'unsupported_scheme',
      `The payment scheme ${JSON.stringify(record['scheme'] ?? null)} is not offered; only "exact" is`,
      'Pay with the "exact" scheme (an EIP-3009 authorization), as the 402 answer requires.',
    );
  }
  const validate = payloadValidator();
  if (!validate(value)) {
    const detail = describeValidationErrors(validate.errors ?? [], 'X-PAYMENT').replace(/\.$/, '');
    throw invalid('invalid_payload', detail, RESEND);
  }
  return value as DecodedPaymentPayload;
}

/** Refuses a payment for another network than the one this service settles on. */
export function checkNetwork(payment: DecodedPaymentPayload, terms: PaymentTerms): void {
  if (payment.network !== terms.network) {
    throw invalid(
      'invalid_network',
      `The payment is for network "${payment.network}"; this service settles on "${terms.network}"`,
      `Sign for network "${terms.network}" (chain ${terms.chainId}), as the 402 answer requires.`,
    );
  }
}

/** SettlementResponseV1 of a settled payment. */
export interface SettlementResponseV1 {
  success: true;
  transaction: string;
  network: string;
  payer: string;
}

/** The `X-PAYMENT-RESPONSE` header value: standard base64 of the JSON. */
export function encodePaymentResponseHeader(response: SettlementResponseV1): string {
  return Buffer.from(JSON.stringify(response), 'utf8').toString('base64');
}
