import { Type } from 'typebox';
import { appliedVersion, loadMigrations } from '../../core/db/migrate.ts';
import { AppError } from '../../core/errors/app-error.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';

const latestMigration = loadMigrations().at(-1)?.version ?? 0;

export const healthRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/healthz',
    operationId: 'health',
    summary: 'Liveness: the process is up',
    tags: ['health'],
    class: 'public',
    wallet: false,
    rateLimited: false,
    schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    docs: {
      errors: [],
      responses: { 200: 'The process is up.' },
      example: { status: 200, response: { status: 'ok' } },
    },
    handler: async () => ({ status: 200, body: { status: 'ok' } }),
  }),
  defineRoute({
    method: 'GET',
    url: '/readyz',
    operationId: 'ready',
    summary: 'Readiness: the database answers and every migration is applied',
    tags: ['health'],
    class: 'public',
    wallet: false,
    rateLimited: false,
    budgetMs: 5000,
    schema: {
      response: {
        200: Type.Object({
          status: Type.Literal('ready'),
          database: Type.String(),
          migration: Type.Integer(),
        }),
      },
    },
    docs: {
      errors: [
        {
          code: 'UNAVAILABLE',
          when: 'the database is behind the migrations this build expects, or does not answer',
        },
      ],
      responses: { 200: 'Ready: the database answers and every migration is applied.' },
      example: { status: 200, response: { status: 'ready', database: 'postgres', migration: 33 } },
    },
    handler: async ({ deps }) => {
      const applied = await appliedVersion(deps.db);
      if (applied < latestMigration) {
        throw new AppError(
          'UNAVAILABLE',
          `Database migrations are behind (${applied} of ${latestMigration}).`,
          {
            remediation: 'Run `purser migrate`, or restart the service to apply migrations at start.',
          },
        );
      }
      return { status: 200, body: { status: 'ready', database: deps.dbKind, migration: applied } };
    },
  }),
];
