import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { applyVocabularies } from './core/http/vocabulary.ts';
import { policyVocabularies } from './modules/policies/index.ts';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { AppDeps } from './deps.ts';
import { AppError } from './core/errors/app-error.ts';
import { clientErrorHandler, sendError, toAppError } from './core/http/error-renderer.ts';
import { mountedRoutes, registerRoutes, type RegisteredRoutes } from './core/http/register.ts';
import { guardRequestBodies } from './core/http/json-body.ts';
import { buildOpenApiDocument } from './core/http/openapi.ts';
import type { RouteDefinition } from './core/http/route-table.ts';
import { lazySerializerCompiler, validatorCompiler } from './core/http/validation.ts';
import { logRequests } from './core/http/request-log.ts';
import { domainObservers } from './metrics.ts';
import { attachEventLog } from './modules/events/index.ts';
import { newId } from './core/ids.ts';
import { routeTable } from './routes.ts';
import { registerMcpEndpoint } from './mcp/http.ts';
import { registerConsole } from './modules/console/index.ts';
import { API_DESCRIPTION, API_TITLE, API_VERSION } from './api-info.ts';

export { API_VERSION } from './api-info.ts';

export interface BuildAppOptions {
  /**
   * Routes beyond the table: the devnet's development routes (in development, through its door),
   * and probes tests register through the same layers.
   */
  extraRoutes?: RouteDefinition[];
}

export interface App {
  fastify: FastifyInstance;
  routes: RegisteredRoutes;
}

/**
 * One log line (and count) per committed domain event of `deps.db`, whoever commits it: the HTTP
 * routes and the workers alike (docs/operations.md, "Logs").
 */
export function logDomainEvents(deps: Pick<AppDeps, 'db' | 'log' | 'metrics'>): void {
  attachEventLog(deps.db, {
    log: deps.log,
    ...(deps.metrics ? { observe: domainObservers(deps.metrics).event } : {}),
  });
}

/** Builds the HTTP app from its dependencies. Does not listen; `fastify.listen` or `inject` does. */
export async function buildApp(deps: AppDeps, options: BuildAppOptions = {}): Promise<App> {
  const { config } = deps;
  const fastify = Fastify({
    loggerInstance: deps.log,
    // One line per request, with the error's code (logRequests below), instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => newId('req'),
    requestIdHeader: false,
    bodyLimit: config.bodyLimitBytes,
    // Requests arriving while the server drains get the spec's error body (see the onRequest hook).
    return503OnClosing: false,
    // A hop count is accepted at run time; the overload picked here only types the other forms.
    trustProxy: config.trustProxy as boolean | string[],
    // Errors raised before routing (a path that is not a valid URL, an over-long path parameter)
    // get the spec's error body too, not Fastify's own.
    // Requests Node's parser refuses (headers too large, malformed HTTP) get the error body too.
    clientErrorHandler: clientErrorHandler(config),
    frameworkErrors: (err, req, reply) => {
      reply.header('x-request-id', req.id);
      void sendError(reply, req, toAppError(err, config.bodyLimitBytes), config);
    },
  });
  fastify.setValidatorCompiler(validatorCompiler);
  fastify.setSerializerCompiler(lazySerializerCompiler());
  // Bodies are JSON only: a text/plain body would otherwise reach validation as a string.
  fastify.removeContentTypeParser('text/plain');
  guardRequestBodies(fastify);
  logRequests(fastify, deps.metrics);
  logDomainEvents(deps);

  let closing = false;
  fastify.addHook('preClose', async () => {
    closing = true;
  });
  fastify.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
    if (closing) {
      reply.header('connection', 'close');
      return sendError(
        reply,
        req,
        new AppError('UNAVAILABLE', 'This server is shutting down; nothing was done.', {
          remediation: 'Retry in a moment: another instance, or this one restarted, will answer.',
          headers: { 'retry-after': '1' },
        }),
        config,
      );
    }
  });

  await fastify.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_req, context) =>
      new AppError('RATE_LIMITED', `Too many requests: at most ${context.max} per minute from one address.`, {
        headers: { 'retry-after': String(Math.max(1, Math.ceil(context.ttl / 1000))) },
      }),
  });

  // The words of the schemas' vocabularies (the policy's venues) come from this configuration.
  const table = applyVocabularies(
    [...routeTable, ...(options.extraRoutes ?? [])],
    policyVocabularies(deps.tokenRegistry),
  );
  const document = buildOpenApiDocument(mountedRoutes(table, config.env), {
    title: API_TITLE,
    version: API_VERSION,
    description: API_DESCRIPTION,
    publicUrl: config.publicUrl,
  });
  await fastify.register(swagger, { mode: 'static', specification: { document: document as never } });
  await fastify.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  registerConsole(fastify);

  fastify.setErrorHandler((err, req, reply) => {
    const appError = toAppError(err, config.bodyLimitBytes);
    if (appError.status >= 500) {
      const level =
        appError.code === 'UNAVAILABLE' || appError.code === 'DEADLINE_EXCEEDED' ? 'warn' : 'error';
      req.log[level]({ err, code: appError.code }, 'request failed');
    }
    return sendError(reply, req, appError, config);
  });

  const registered = registerRoutes(fastify, table, deps);
  registerMcpEndpoint(fastify, registered.routes, config);
  fastify.setNotFoundHandler((req, reply) => {
    const allowed = registered.allowedMethods(req.url);
    if (allowed.length > 0) {
      return sendError(
        reply,
        req,
        new AppError(
          'METHOD_NOT_ALLOWED',
          `${req.method} is not allowed on this path; use ${allowed.join(', ')}.`,
          {
            headers: { allow: allowed.join(', ') },
          },
        ),
        config,
      );
    }
    return sendError(
      reply,
      req,
      new AppError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}.`, {
        remediation: 'Check the path against the API reference at /docs.',
        next: [{ method: 'GET', path: '/v1/openapi.json', why: 'lists every route of this API' }],
      }),
      config,
    );
  });

  await fastify.ready();
  return { fastify, routes: registered };
}
