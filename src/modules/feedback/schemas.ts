import { Type } from 'typebox';
import { FEATURE_REQUEST_STATUSES } from './store.ts';
import { FEEDBACK_LIST_DEFAULT_LIMIT, FEEDBACK_LIST_MAX_LIMIT } from './service.ts';

export const FeedbackListQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: FEEDBACK_LIST_MAX_LIMIT, default: FEEDBACK_LIST_DEFAULT_LIMIT }),
    ),
  },
  { additionalProperties: false },
);

export const PublicFeatureRequestSchema = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    status: Type.Union(FEATURE_REQUEST_STATUSES.map((s) => Type.Literal(s))),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, title: 'FeatureRequest' },
);

export const FeedbackListResponse = Type.Object(
  { requests: Type.Array(PublicFeatureRequestSchema) },
  { additionalProperties: false },
);

export const FeedbackCreateBody = Type.Object(
  {
    title: Type.String({ minLength: 8, maxLength: 120, description: 'Published on GET /v1/feedback.' }),
    body: Type.String({ minLength: 20, maxLength: 4000, description: 'Never published.' }),
  },
  { additionalProperties: false },
);

export const FeedbackReceiptSchema = Type.Object(
  {
    id: Type.String({ description: 'The feature request (`fr_…`).' }),
    status: PublicFeatureRequestSchema.properties.status,
    charged_usd: Type.String({
      pattern: '^(0|[1-9][0-9]*)(\\.[0-9]{1,6})?$',
      description: '"1" when the fee was charged; "0" when metering is switched off.',
    }),
    paid_ref: Type.Union([Type.String(), Type.Null()], {
      description:
        'Where the fee is: the id of the fee ledger group when paid from the prepaid balance, the ' +
        'settlement transaction hash when paid with x402, null when nothing was charged.',
    }),
  },
  {
    additionalProperties: false,
    description:
      'Recorded. Paid with x402, the answer carries `X-PAYMENT-RESPONSE`: base64 of the x402 v1 ' +
      'SettlementResponse `{success, transaction, network, payer}`.',
  },
);

const X402Requirements = Type.Object(
  {
    scheme: Type.Literal('exact'),
    network: Type.String({ description: 'x402 v1 network name, e.g. "base".' }),
    maxAmountRequired: Type.String({ description: 'USDC base units: "1000000" is 1 USD.' }),
    resource: Type.String({ description: 'The URL paid for.' }),
    description: Type.String(),
    mimeType: Type.String(),
    payTo: Type.String({ description: 'The platform treasury.' }),
    maxTimeoutSeconds: Type.Integer(),
    asset: Type.String({ description: 'USDC on the payments chain.' }),
    extra: Type.Object(
      { name: Type.String(), version: Type.String() },
      { additionalProperties: false, description: "The token's EIP-712 domain name and version." },
    ),
  },
  { additionalProperties: false },
);

const NextStepSchema = Type.Object(
  {
    method: Type.Union([
      Type.Literal('GET'),
      Type.Literal('POST'),
      Type.Literal('PUT'),
      Type.Literal('DELETE'),
    ]),
    path: Type.String(),
    why: Type.String(),
  },
  { additionalProperties: false },
);

/**
 * The 402 body of POST /v1/feedback: the x402 v1 PaymentRequirementsResponse (`x402Version`,
 * `error`, `accepts`) with the error body's fields beside it, so x402 clients and every other
 * client read it.
 */
export const X402PaymentRequired = Type.Object(
  {
    x402Version: Type.Literal(1),
    error: Type.String({ description: 'x402: why payment is required.' }),
    accepts: Type.Array(X402Requirements),
    code: Type.Literal('PAYMENT_REQUIRED'),
    message: Type.String(),
    remediation: Type.String(),
    docs_url: Type.String({ description: 'The anchor of PAYMENT_REQUIRED in the served error table.' }),
    request_id: Type.String({ description: 'Also in the `x-request-id` header.' }),
    next: Type.Optional(
      Type.Array(NextStepSchema, {
        description:
          'The top-up (POST /v1/balance/topups), its terms and, in development, the faucet naming the chain to fund.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Payment required: the prepaid balance does not cover the fee. An x402 v1 client retries the same ' +
      'request with `X-PAYMENT`; any client may top up instead. The error body fields sit beside the x402 ones.',
  },
);

/** The 201 of POST /v1/feedback: the receipt, and the settlement answer of an x402 payment. */
export const FeedbackCreatedResponse = {
  description: 'Recorded: paid from the prepaid balance, or settled on-chain with an x402 payment.',
  headers: {
    'payment-response': Type.String({
      description: 'Paid with PAYMENT-SIGNATURE (x402 v2): base64 of the SettleResponse JSON.',
    }),
    'x-payment-response': Type.String({
      description: 'Paid with X-PAYMENT (x402 v1): base64 of the SettlementResponse JSON.',
    }),
  },
  content: { 'application/json': { schema: FeedbackReceiptSchema } },
};

/** The 402 of POST /v1/feedback: the x402 v1 body with the error body beside it, and the v2 header. */
export const FeedbackPaymentRequiredResponse = {
  description: 'The prepaid balance does not cover the fee: pay with x402 (either version) or top up.',
  headers: {
    'payment-required': Type.String({
      description:
        'x402 v2: base64 of the PaymentRequired JSON {x402Version: 2, error, resource, accepts: [{scheme, ' +
        'network (CAIP-2), amount, asset, payTo, maxTimeoutSeconds, extra}]}.',
    }),
  },
  content: { 'application/json': { schema: X402PaymentRequired } },
};
