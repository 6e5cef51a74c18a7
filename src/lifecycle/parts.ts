// Every module's part of the account's life cycle (src/core/account-part.ts), in the order the
// purge of a test account deletes them: children before the rows they reference, the account's own
// row last. The export and the offboarding read the same list, so a module with rows of an account
// is added here once; a test checks the list against every account column of the schema.

import type { AccountPart } from '../core/account-part.ts';
import { idempotencyAccountPart } from '../core/http/idempotency.ts';
import { accountAccountPart } from '../modules/account/account-part.ts';
import { auditAccountPart } from '../modules/audit/account-part.ts';
import { authAccountPart } from '../modules/auth/account-part.ts';
import { billingAccountPart } from '../modules/billing/account-part.ts';
import { chainwatchAccountPart } from '../modules/chainwatch/account-part.ts';
import { delegationsAccountPart } from '../modules/delegations/account-part.ts';
import { eventsAccountPart } from '../modules/events/account-part.ts';
import { feedbackAccountPart } from '../modules/feedback/account-part.ts';
import { intentsAccountPart } from '../modules/intents/account-part.ts';
import { ledgerAccountPart } from '../modules/ledger/account-part.ts';
import { paymentsAccountPart } from '../modules/payments/account-part.ts';
import { pmAccountPart } from '../modules/pm/account-part.ts';
import { policiesAccountPart } from '../modules/policies/account-part.ts';
import { rebalancesAccountPart } from '../modules/rebalances/account-part.ts';
import { smartAccountAccountPart } from '../modules/smart-account/account-part.ts';
import { statementsAccountPart } from '../modules/statements/account-part.ts';
import { webhooksAccountPart } from '../modules/webhooks/account-part.ts';

export interface AccountPartsOptions {
  /** Whether statement exports go to an S3 bucket (configuration): the export's manifest says so. */
  statementsBucketBound?: boolean;
}

export function accountParts(options: AccountPartsOptions = {}): readonly AccountPart[] {
  return [
    auditAccountPart,
    pmAccountPart,
    authAccountPart,
    idempotencyAccountPart,
    webhooksAccountPart,
    eventsAccountPart,
    feedbackAccountPart,
    billingAccountPart,
    paymentsAccountPart,
    statementsAccountPart(options.statementsBucketBound ?? false),
    rebalancesAccountPart,
    smartAccountAccountPart,
    chainwatchAccountPart,
    intentsAccountPart,
    policiesAccountPart,
    delegationsAccountPart,
    ledgerAccountPart,
    accountAccountPart,
  ];
}
