// @purser/sdk: the typed client of the Purser treasury API and the helpers every agent needs.

export { Purser, ok, printExchange, type Exchange, type PurserOptions } from './client.ts';
export { PurserError, WebhookVerificationError, type NextStep } from './errors.ts';
export {
  signApproval,
  signDelegation,
  signTopUp,
  signX402Payment,
  signX402PaymentV2,
  type ApprovalRequest,
  type PaymentRequirementsV1,
  type PaymentRequirementsV2,
  type SignedAuthorization,
  type TopupTerms,
} from './signing.ts';
export { EVENT_ID_HEADER, SIGNATURE_HEADER, verifyWebhook, type WebhookDelivery } from './webhooks.ts';
export type { components, paths } from './schema.ts';
