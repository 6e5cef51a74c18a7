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
    handler: async () => ({
      status: 200,
      body: null,
      raw: { text: errorPage, contentType: 'text/html; charset=utf-8' },
    }),
  }),
];
