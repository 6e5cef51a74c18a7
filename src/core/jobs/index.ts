export {
  DEFAULT_MAX_ATTEMPTS,
  enqueueJob,
  getJob,
  listFailedJobs,
  retryFailedJob,
  type EnqueueJobParameters,
  type Job,
  type JobSchedulesTable,
  type JobState,
  type JobsTable,
  type ListFailedJobsParameters,
} from './queue.ts';
export {
  createWorker,
  retryDelayMs,
  type CreateWorkerParameters,
  type JobContext,
  type JobHandler,
  type JobLogger,
  type JobSchedule,
  type JobWorker,
  type StopOptions,
} from './worker.ts';
