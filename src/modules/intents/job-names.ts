// The names of the jobs intents hand to the queue.

/** The job the executor runs for each admitted intent (at once, or once its approval is complete). */
export const EXECUTE_JOB = 'intents.execute';

/** The job that ends an intent still waiting for its quorum at its `expires_at`. */
export const APPROVAL_EXPIRY_JOB = 'intents.approval_expiry';
