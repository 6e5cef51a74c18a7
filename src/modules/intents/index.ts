// The intents module: conversions and gas top-ups admitted under the wallet's policy and handed to
// the executor (the `intents.execute` job).

export { intentsRoutes } from './routes.ts';
export { EXECUTE_JOB, NATIVE_PLACEHOLDER, toIntent, type Intent } from './service.ts';
export {
  claimPlannedIntent,
  endExecutingIntent,
  findIntent,
  findIntentById,
  intentIdsWhere,
  intentStatuses,
  openIntentCounts,
  saveIntentReport,
  type IntentKind,
  type IntentParams,
  type IntentRow,
  type IntentStatus,
} from './store.ts';
