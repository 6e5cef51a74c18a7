import FindMyWay from 'find-my-way';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.ts';
import { Deadline } from './deadline.ts';
import {
  fingerprintOf,
  idempotencyPath,
  readIdempotencyKey,
  runIdempotent,
  runIdempotentAlone,
  runReplayable,
} from './idempotency.ts';
import type { RouteResult } from './results.ts';
import { refuseUnstorableText } from './storable-text.ts';
import {
  isIdempotent,
  isRateLimited,
  type HttpMethod,
  type Principal,
  type RouteContext,
  type RouteDefinition,
  type RouteDeps,
} from './route-table.ts';

export interface RegisteredRoutes {
  routes: RouteDefinition[];
  /** Methods that a concrete path accepts, for 405 answers. */
  allowedMethods(url: string): HttpMethod[];
}

const METHODS: HttpMethod[] = ['GET', 'POST', 'PUT', 'DELETE'];

/** The authenticated caller of each request, set by the guard. */
const principals = new WeakMap<FastifyRequest, Principal | null>();
/** Requests whose credential the guard refused but which may replay a stored response (`retiredReplay`). */
const retiredCallers = new WeakMap<FastifyRequest, { accountId: string; refusal: unknown }>();

/** The routes of the table this deployment mounts: development helpers never in production. */
export function mountedRoutes(table: RouteDefinition[], env: string): RouteDefinition[] {
  return table.filter((r) => !(r.devOnly && env === 'production'));
}

/** Registers every route of the table on the app, each behind the shared guard and layers. */
export function registerRoutes(
  app: FastifyInstance,
  table: RouteDefinition[],
  deps: RouteDeps,
): RegisteredRoutes {
  const mounted = mountedRoutes(table, deps.config.env);
  const seen = new Set<string>();
  const router = FindMyWay();
  for (const route of mounted) {
    const id = `${route.method} ${route.url}`;
    if (seen.has(id)) throw new Error(`Route ${id} is defined twice`);
    seen.add(id);
    router.on(route.method, route.url.replace(/\{(\w+)\}/g, ':$1'), () => undefined);
    mountRoute(app, route, deps);
  }
  return {
    routes: mounted,
    allowedMethods: (url) => {
      const path = url.split('?')[0] ?? url;
      return METHODS.filter((m) => router.find(m, path) !== null);
    },
  };
}

function mountRoute(app: FastifyInstance, route: RouteDefinition, deps: RouteDeps): void {
  const rateLimited = isRateLimited(route);
  const idempotent = isIdempotent(route);
  const { response, ...inputSchemas } = route.schema;
  app.route({
    method: route.method,
    url: route.url.replace(/\{(\w+)\}/g, ':$1'),
    schema: {
      ...inputSchemas,
      response,
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      ...(route.class !== 'public' ? { security: [{ bearer: [] }] } : {}),
    },
    config: rateLimited
      ? { rateLimit: { max: deps.config.publicRateLimitPerMinute, timeWindow: 60_000 } }
      : { rateLimit: false },
    ...(route.gate ? { onRequest: async (req: FastifyRequest) => route.gate!(req, deps) } : {}),
    // The guard runs before validation: an unauthenticated caller learns nothing about the
    // body's shape, and a forbidden one is refused before any work. Text the database cannot
    // store is refused first, like a body that is not JSON: the guard itself reads the database
    // with the path's parameters.
    preValidation: async (req) => {
      refuseUnstorableText({ params: req.params, query: req.query, body: req.body });
      try {
        principals.set(req, await authenticate(req, route, deps));
      } catch (err) {
        const accountId = await retiredAccount(req, route, deps, err);
        if (!accountId) throw err;
        retiredCallers.set(req, { accountId, refusal: err });
      }
    },
    handler: async (req, reply) => {
      const principal = principals.get(req) ?? null;
      const retired = retiredCallers.get(req);
      const deadline = new Deadline(route.budgetMs ?? deps.config.requestBudgetMs);
      const key = idempotent ? readIdempotencyKey(req.headers['idempotency-key']) : null;
      // After validation: the route's pattern and its decoded parameters, however the URL spelled them.
      const path = idempotencyPath(route.url, req.params);
      const clientIp = req.ip;
      let mutated = false;
      const once = (what: string) => {
        if (mutated) throw new Error(`${route.operationId}: ${what}() may run once per request`);
        mutated = true;
      };
      const idempotencyScope = () =>
        key
          ? {
              scope: principal
                ? principal.accountId
                : retired
                  ? retired.accountId
                  : route.class === 'operator'
                    ? 'operator'
                    : `ip:${clientIp}`,
              method: route.method,
              path,
              key,
              fingerprint: fingerprintOf(route.method, path, req.query, req.body),
            }
          : null;
      const ctx: RouteContext<typeof route.schema> = {
        req,
        reply,
        body: req.body as never,
        query: req.query as never,
        params: req.params as never,
        deps,
        deadline,
        requestId: req.id,
        principal,
        clientIp,
        userAgent: typeof req.headers['user-agent'] === 'string' ? req.headers['user-agent'] : null,
        requestKey: () => {
          const scope = idempotencyScope();
          return scope ? { key: scope.key, fingerprint: scope.fingerprint } : null;
        },
        mutate: (fn) => {
          once('mutate');
          return runIdempotent(deps.db, deps.clock, idempotencyScope(), fn);
        },
        replayable: (fn) => {
          once('replayable');
          return runReplayable(deps.db, deps.clock, idempotencyScope(), fn);
        },
        mutateAlone: (write, fallback) => {
          once('mutateAlone');
          return runIdempotentAlone(deps.db, deps.clock, idempotencyScope(), write, fallback);
        },
      };
      // A retired credential gets the stored response under its key, or the guard's refusal.
      const result = retired
        ? await runIdempotent(deps.db, deps.clock, idempotencyScope(), () => Promise.reject(retired.refusal))
        : await withBudget(route.handler(ctx), deadline);
      if (result.headers) reply.headers(result.headers);
      if (result.raw) return reply.code(result.status).type(result.raw.contentType).send(result.raw.text);
      return reply
        .code(result.status)
        .type('application/json; charset=utf-8')
        .send(
          'text' in result && typeof result.text === 'string' ? result.text : JSON.stringify(result.body),
        );
    },
  });
}

async function authenticate(
  req: FastifyRequest,
  route: RouteDefinition,
  deps: RouteDeps,
): Promise<Principal | null> {
  if (route.class === 'public') return null;
  if (route.class === 'operator') {
    verifyOperator(req, deps);
    return null;
  }
  return deps.authenticator.authenticate(req, route);
}

/** The account a refused credential may replay for (`retiredReplay`), given a valid Idempotency-Key. */
async function retiredAccount(
  req: FastifyRequest,
  route: RouteDefinition,
  deps: RouteDeps,
  refusal: unknown,
): Promise<string | null> {
  if (!route.retiredReplay || !(refusal instanceof AppError) || refusal.code !== 'UNAUTHORIZED') return null;
  try {
    if (readIdempotencyKey(req.headers['idempotency-key']) === null) return null;
  } catch {
    return null;
  }
  return route.retiredReplay(req, deps);
}

/**
 * Races the handler against its time budget. A handler that checks its deadline gets a precise
 * 504 from its own check; this outer bound answers for one that is stuck in a call.
 */
async function withBudget(work: Promise<RouteResult>, deadline: Deadline): Promise<RouteResult> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const sent = deadline.transmitted.length
        ? ` Already transmitted: ${deadline.transmitted.join(', ')}.`
        : ' Nothing is known to have been transmitted.';
      reject(
        new AppError(
          'DEADLINE_EXCEEDED',
          `The request did not finish within its ${deadline.budgetMs} ms time budget.${sent}`,
          {
            remediation:
              'Retry with the same Idempotency-Key: anything the first attempt committed is replayed, not repeated.',
          },
        ),
      );
    }, deadline.budgetMs);
  });
  try {
    return await Promise.race([work, expiry]);
  } finally {
    clearTimeout(timer);
    work.catch(() => undefined); // a late failure of an abandoned handler is not unhandled
  }
}

/**
 * The operator surface (/v1/ops/): only the operator token from config opens it. No account
 * credential reaches it, and without a configured token it does not exist (404).
 */
function verifyOperator(req: FastifyRequest, deps: RouteDeps): void {
  const expected = deps.config.operatorToken;
  if (!expected) {
    throw new AppError('NOT_FOUND', 'The operator surface is not enabled on this service.', {
      remediation: 'Set PURSER_OPERATOR_TOKEN to enable /v1/ops/, or use the `purser ops` command.',
    });
  }
  const match = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '');
  const digest = (v: string) => createHash('sha256').update(v).digest();
  if (!match?.[1] || !timingSafeEqual(digest(match[1]), digest(expected))) {
    throw new AppError(
      'UNAUTHORIZED',
      'Operator routes need the operator token: Authorization: Bearer <token>.',
      {
        remediation:
          'Use the PURSER_OPERATOR_TOKEN of this deployment; account credentials never reach /v1/ops/.',
      },
    );
  }
}
