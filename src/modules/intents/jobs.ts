// The intents module's job: an intent still waiting for its approvers at its `expires_at` ends.

import { Type } from 'typebox';
import { defineJob, type AnyJobDefinition, type JobDeps } from '../../core/jobs/index.ts';
import { expireApproval } from './approvals.ts';
import { APPROVAL_EXPIRY_JOB } from './job-names.ts';

export const intentsJobs: AnyJobDefinition<JobDeps>[] = [
  defineJob({
    name: APPROVAL_EXPIRY_JOB,
    payload: Type.Object({ intent_id: Type.String() }),
    run: async (deps: JobDeps, { intent_id: id }) => {
      if (await expireApproval(deps, id)) deps.log.info({ intent: id }, 'intent approval expired: aborted');
    },
  }),
];
