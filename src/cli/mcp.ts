// `purser mcp`: the MCP server over stdio, for MCP clients that start their servers as commands.
// It is a client of a running Purser: every tool call is an HTTP request to PURSER_URL with the
// API key in PURSER_API_KEY, so the service's guard, scopes and idempotency apply. Stdout carries
// only the protocol; anything for a person goes to stderr.

import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer, credentialOf, type ApiCaller } from '../mcp/server.ts';
import { mcpTools } from '../mcp/tools.ts';
import { routeTable } from '../routes.ts';

export const MCP_USAGE = `Usage: PURSER_API_KEY=<key> [PURSER_URL=http://127.0.0.1:8080] purser mcp

Serves Purser's tools and resources over MCP on stdin/stdout, calling the API at PURSER_URL with
the API key; the key's scopes bound which tools are listed and callable.`;

export async function runMcpStdio(env: NodeJS.ProcessEnv): Promise<number> {
  const baseUrl = (env['PURSER_URL'] ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
  const key = env['PURSER_API_KEY'];
  if (!key) {
    console.error(`PURSER_API_KEY is not set.\n\n${MCP_USAGE}`);
    return 78; // EX_CONFIG
  }
  const call: ApiCaller = async (request) => {
    const res = await fetch(`${baseUrl}${request.url}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
    });
    return { status: res.status, body: await res.text() };
  };
  const authorization = `Bearer ${key}`;
  let who: Awaited<ReturnType<typeof credentialOf>>;
  try {
    who = await credentialOf(call, authorization);
  } catch (err) {
    console.error(
      `Purser does not answer at ${baseUrl}: ${(err as Error).message}. Start it (npm start) or set PURSER_URL.`,
    );
    return 69; // EX_UNAVAILABLE
  }
  if ('refusal' in who) {
    console.error(`Purser refused the API key (${who.refusal.status}): ${who.refusal.body}`);
    return 77; // EX_NOPERM
  }
  const server = createMcpServer({
    tools: mcpTools(routeTable),
    call,
    authorization,
    credential: who.credential,
    publicUrl: baseUrl,
  });
  const closed = new Promise<number>((resolve) => {
    server.onclose = () => resolve(0);
  });
  await server.connect(new StdioServerTransport());
  return closed;
}
