import type { RouteDefinition } from '../../core/http/route-table.ts';
import { eventsRoutes } from '../events/routes.ts';
import { webhookRoutes } from './routes.ts';

export {
  createWebhookDispatcher,
  MAX_DELIVERY_ATTEMPTS,
  RETRY_SCHEDULE_SECONDS,
  WEBHOOK_CHANNEL,
  type WebhookDispatcher,
  type WebhookDispatcherParameters,
} from './dispatcher.ts';
export { compactEnvelopes, deleteSettledDeliveriesBefore, deliveryBacklog } from './store.ts';
export { deliveryBody, signatureHeader, ATTEMPT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER } from './send.ts';
export { ensureSecret, listFailures, setEndpoint, vetDestination, type WebhookSettings } from './service.ts';

/** GET /v1/events and the webhook endpoints, for the route table. */
export const webhooksRoutes: RouteDefinition[] = [...eventsRoutes, ...webhookRoutes];
export { resealWebhookSecrets } from './reseal.ts';
