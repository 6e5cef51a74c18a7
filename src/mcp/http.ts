// MCP over streamable HTTP at /v1/mcp, stateless: each POST carries one JSON-RPC message (or a
// batch) and gets its answer as JSON. The bearer credential is checked by the API's own guard
// (GET /v1/auth/session) before anything else; each tool call is injected into this app with it.

import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { AppError } from '../core/errors/app-error.ts';
import { sendError } from '../core/http/error-renderer.ts';
import type { RouteDefinition } from '../core/http/route-table.ts';
import { createMcpServer, credentialOf, type ApiCaller } from './server.ts';
import { mcpTools } from './tools.ts';

export const MCP_PATH = '/v1/mcp';

export function registerMcpEndpoint(app: FastifyInstance, routes: RouteDefinition[], config: Config): void {
  const tools = mcpTools(routes);
  const carried = networkHeaders(config);
  // Each tool call is injected as if it came over the network the MCP request came over: from the
  // same socket peer, with the same proxy and edge headers. So the API derives the same client
  // address (per-address rate limits and idempotency scopes stay the caller's) and the
  // jurisdiction gate, which trusts headers only from a trusted proxy peer, decides exactly as it
  // does for the same request over REST.
  const callerFrom =
    (outer: FastifyRequest): ApiCaller =>
    async (request) => {
      const network: Record<string, string | string[]> = {};
      for (const name of carried) {
        const value = outer.headers[name];
        if (value !== undefined) network[name] = value;
      }
      const res = await app.inject({
        method: request.method as 'GET',
        url: request.url,
        headers: { ...network, ...request.headers },
        remoteAddress: outer.socket.remoteAddress ?? '',
        ...(request.body !== undefined ? { payload: request.body } : {}),
      });
      return { status: res.statusCode, body: res.body };
    };
  app.post(MCP_PATH, { config: { rateLimit: false } }, async (req, reply) => {
    const call = callerFrom(req);
    const authorization = req.headers.authorization ?? '';
    const who = await credentialOf(call, authorization);
    if ('refusal' in who) {
      return reply.code(who.refusal.status).type('application/json; charset=utf-8').send(who.refusal.body);
    }
    const server = createMcpServer({
      tools,
      call,
      authorization,
      credential: who.credential,
      publicUrl: config.publicUrl,
    });
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true }); // no session id generator: stateless;
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  });
  // Stateless: there is no stream to open (GET) or session to end (DELETE).
  const onlyPost = async (req: FastifyRequest, reply: FastifyReply) =>
    sendError(
      reply,
      req,
      new AppError(
        'METHOD_NOT_ALLOWED',
        `${req.method} is not allowed on ${MCP_PATH}; use POST (stateless streamable HTTP).`,
        {
          headers: { allow: 'POST' },
        },
      ),
      config,
    );
  app.get(MCP_PATH, onlyPost);
  app.delete(MCP_PATH, onlyPost);
}

/**
 * The headers that say where a request came from, carried from an MCP request to its tool calls:
 * the proxy chain, the trusted edge's country header, and the user agent (recorded as network
 * context). Nothing else of the MCP request reaches a tool call.
 */
function networkHeaders(config: Config): string[] {
  return [
    'x-forwarded-for',
    'x-forwarded-proto',
    'x-forwarded-host',
    'forwarded',
    'x-real-ip',
    'user-agent',
    config.pm.geo.countryHeader,
  ];
}
