// How a module declares a job next to its code: its name, the schema of its payload, how often it
// runs when it is periodic, and its handler, which may return the continuation the job queue then
// holds (the same job again, later, with its payload). src/jobs.ts lists the modules' jobs.

import type { Static, TSchema } from 'typebox';
import type { Clock } from '../clock.ts';
import type { DbExecutor } from '../db/database.ts';
import { createAjv } from '../http/validation.ts';
import { enqueueJob, type Job } from './queue.ts';
import type { JobContext, JobHandler, JobLogger, JobSchedule } from './worker.ts';

/** The same job again at `runAt`; `singletonKey` keeps a retried step from enqueueing it twice. */
export interface JobContinuation<P> {
  runAt: Date;
  payload: P;
  singletonKey: string;
}

/** A handler's view of its run: the worker's context and the job row (its attempts). */
export interface JobRun extends JobContext {
  job: Job;
}

export interface JobDefinition<D, S extends TSchema | undefined = undefined> {
  name: string;
  /** The payload's JSON schema; a payload that does not match is logged and dropped, not run. */
  payload?: S;
  /**
   * Periodic jobs: every so many seconds, or a function of the configuration (null: not scheduled
   * with it). Absent: the job runs only when enqueued.
   */
  every?: number | ((config: ConfigOf<D>) => number | null);
  run(
    deps: D,
    payload: S extends TSchema ? Static<S> : undefined,
    run: JobRun,
  ): Promise<JobContinuation<S extends TSchema ? Static<S> : undefined> | void>;
}

/** What every job handler has: the database, the clock and a logger. */
export interface JobDeps {
  db: DbExecutor;
  clock: Clock;
  log: JobLogger;
}

/** The configuration in dependencies `D` (their `config`). */
export type ConfigOf<D> = D extends { config: infer C } ? C : never;

/** Any job definition of dependencies `D`, whatever its payload. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the list holds every payload type
export type AnyJobDefinition<D> = JobDefinition<D, any>;

/** Declares a job (the identity function, for the types). */
export function defineJob<D, S extends TSchema | undefined = undefined>(
  definition: JobDefinition<D, S>,
): JobDefinition<D, S> {
  return definition;
}

const ajv = createAjv();

/** The worker's handlers of `definitions`: payloads checked, continuations enqueued. */
export function jobHandlersOf<D extends { db: DbExecutor; clock: Clock; log: JobLogger }>(
  definitions: readonly AnyJobDefinition<D>[],
  deps: D,
): Record<string, JobHandler> {
  const handlers: Record<string, JobHandler> = {};
  for (const definition of definitions) {
    if (handlers[definition.name]) throw new Error(`Job ${definition.name} is defined twice`);
    const valid = definition.payload ? ajv.compile(definition.payload as object) : null;
    handlers[definition.name] = async (job, ctx) => {
      if (valid && !valid(job.payload)) {
        deps.log.warn(
          { job: job.id, name: definition.name, errors: ajv.errorsText(valid.errors) },
          'job payload does not match its schema; dropped',
        );
        return;
      }
      const next = await definition.run(deps, job.payload as never, { ...ctx, job });
      if (next) {
        await enqueueJob(deps.db, deps.clock, {
          name: definition.name,
          payload: next.payload,
          runAt: next.runAt,
          singletonKey: next.singletonKey,
        });
      }
    };
  }
  return handlers;
}

/**
 * The schedules of the periodic jobs among `definitions` with this configuration; without one,
 * only those whose period does not depend on it.
 */
export function jobSchedulesOf<D>(
  definitions: readonly AnyJobDefinition<D>[],
  config?: ConfigOf<D>,
): JobSchedule[] {
  return definitions.flatMap((d) => {
    const every =
      typeof d.every !== 'function' ? d.every : config === undefined ? undefined : d.every(config);
    return every === undefined || every === null
      ? []
      : [{ name: d.name, everySeconds: every, jobName: d.name }];
  });
}
