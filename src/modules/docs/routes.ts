import { Type } from 'typebox';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { renderErrorPage } from './error-page.ts';

const errorPage = renderErrorPage();

export const docsRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/openapi.json',
    operationId: 'getOpenApi',
    summary: 'The OpenAPI 3.1 document of this API',
    tags: ['docs'],
    class: 'public',
    wallet: false,
    rateLimited: false,
    schema: { response: { 200: Type.Object({}, { additionalProperties: true }) } },
    docs: {
      errors: [],
      responses: { 200: 'The OpenAPI 3.1 document: every route, its schemas, errors and examples.' },
      example: {
        status: 200,
        response: {
          openapi: '3.1.0',
          info: { title: 'Purser treasury API', version: '0.1.0' },
          servers: [{ url: 'https://purser.example' }],
          paths: {
            '/healthz': {
              get: {
                operationId: 'health',
                summary: 'Liveness: the process is up',
                tags: ['health'],
                responses: {
                  '200': {
                    description: 'The process is up.',
                    content: { 'application/json': { example: { status: 'ok' } } },
                  },
                },
              },
            },
          },
          components: { schemas: {} },
        },
      },
    },
    handler: async ({ req }) => ({ status: 200, body: req.server.swagger() }),
  }),
  defineRoute({
    method: 'GET',
    url: '/docs/errors',
    operationId: 'getErrorTable',
    summary: 'The error-code table (HTML), one anchor per code',
    tags: ['docs'],
    class: 'public',
    wallet: false,
    rateLimited: false,
    schema: { response: { 200: Type.String() } },
    docs: {
      errors: [],
      responses: { 200: 'The error-code table as an HTML page, one anchor per code.' },
      contentType: 'text/html',
      example: {
        status: 200,
        response:
          '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Purser error codes</title>' +
          '</head>\n<body><h1>Error codes</h1>\n<table><thead><tr><th>Code</th><th>Status</th><th>Meaning</th>' +
          '<th>What to do</th><th>Next step</th></tr></thead>\n<tbody>\n<tr id="NOT_FOUND">\n' +
          '  <td><a href="#NOT_FOUND"><code>NOT_FOUND</code></a></td><td>404</td>\n' +
          '  <td>The resource or route does not exist, or belongs to another account.</td>' +
          '<td>Check the path and the id; list the resources of your account to find valid ids.</td>' +
          '<td>Which list holds valid ids depends on the resource, so the raiser names it; an unknown route ' +
          'points at the OpenAPI document.</td>\n</tr>\n</tbody></table></body></html>\n',
      },
    },
    handler: async () => ({
      status: 200,
      body: null,
      raw: { text: errorPage, contentType: 'text/html; charset=utf-8' },
    }),
  }),
];
