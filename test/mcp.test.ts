// Purser over MCP, as MCP clients use it: the protocol SDK's own client over streamable HTTP
// (/v1/mcp) and over stdio (`purser mcp`), and an independent client (the MCP inspector's CLI).
// Tools are bounded by the API key's scopes; a call goes through the API's guard and idempotency;
// a tool error carries the API's error body.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ok, Purser } from '../packages/sdk/src/index.ts';
import { everyRoute } from './support/routes.ts';
import { startListeningService, type ListeningService } from './support/listening-service.ts';
import { REPO_ROOT } from './support/service-process.ts';

const devnet = inject('devnet');
let service: ListeningService;
const keys: Record<'read' | 'write' | 'admin', string> = { read: '', write: '', admin: '' };
const clients: Client[] = [];

beforeAll(async () => {
  service = await startListeningService(devnet);
  const purser = new Purser({ baseUrl: service.url });
  await purser.signIn(privateKeyToAccount(generatePrivateKey()));
  for (const scope of ['read', 'write', 'admin'] as const) {
    const key = await ok(purser.api.POST('/v1/keys', { body: { name: `mcp ${scope}`, scopes: [scope] } }));
    keys[scope] = key.token!;
  }
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await service?.close();
});

async function httpClient(key: string): Promise<Client> {
  const client = new Client({ name: 'purser-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/v1/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

type Structured = { http_status: number; code?: string; next?: { path: string }[] } & Record<string, unknown>;

describe('MCP over streamable HTTP (/v1/mcp)', () => {
  it('lists one tool per agent operation of the route table, with its input schema; never operator or development routes', async () => {
    const client = await httpClient(keys.admin);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    const byId = new Map(everyRoute.map((r) => [r.operationId, r]));
    for (const name of names) {
      const route = byId.get(name);
      expect(route, name).toBeDefined();
      expect(route!.class === 'operator' || route!.class === 'executor' || !!route!.devOnly).toBe(false);
    }
    for (const id of ['createIntent', 'getIntent', 'listIntents', 'createApiKey', 'getBalance', 'listTokens'])
      expect(names).toContain(id);
    for (const id of ['devFaucet', 'devKernelAccount', 'opsListSwitches', 'createAuthChallenge'])
      expect(names).not.toContain(id);
    const create = tools.find((t) => t.name === 'createIntent')!;
    expect(create.description).toContain(byId.get('createIntent')!.summary);
    expect(create.inputSchema.required).toEqual(expect.arrayContaining(['wallet', 'kind', 'sell_token']));
    expect(Object.keys(create.inputSchema.properties ?? {})).toContain('idempotency_key');
    const get = tools.find((t) => t.name === 'getIntent')!;
    expect(get.inputSchema.required).toEqual(['id']);
    expect(get.annotations?.readOnlyHint).toBe(true);
    // An approval is a tool only for a signature the caller brings: nothing signs for it.
    const approve = tools.find((t) => t.name === 'approveIntent')!;
    expect(approve.inputSchema.required).toEqual(expect.arrayContaining(['id', 'approver', 'signature']));
  });

  it("bounds the listed tools by the key's scopes", async () => {
    const read = (await (await httpClient(keys.read)).listTools()).tools.map((t) => t.name);
    const write = (await (await httpClient(keys.write)).listTools()).tools.map((t) => t.name);
    expect(read).toContain('getIntent');
    expect(read).not.toContain('createIntent');
    expect(read).not.toContain('createApiKey');
    expect(write).toContain('createIntent');
    expect(write).not.toContain('createApiKey');
  });

  it('calls a read; a mutation under an idempotency key runs once; a scope refusal carries the error body', async () => {
    const admin = await httpClient(keys.admin);
    const balance = await admin.callTool({ name: 'getBalance', arguments: {} });
    expect(balance.isError).toBeFalsy();
    expect((balance.structuredContent as Structured).balance_usd).toMatch(/^\d+\.\d{6}$/);

    const args = { name: 'made over MCP', scopes: ['read'], idempotency_key: 'mcp-create-key-1' };
    const first = await admin.callTool({ name: 'createApiKey', arguments: args });
    const again = await admin.callTool({ name: 'createApiKey', arguments: args });
    const [a, b] = [first.structuredContent as Structured, again.structuredContent as Structured];
    expect(a.http_status).toBe(201);
    expect(a.token).toMatch(/^\S+$/);
    expect(b.id).toBe(a.id);
    expect(b.token).toBeNull(); // replayed: the token is never shown twice
    const listed = (await admin.callTool({ name: 'listApiKeys', arguments: {} })).structuredContent as {
      keys: { name: string }[];
    };
    expect(listed.keys.filter((k) => k.name === 'made over MCP')).toHaveLength(1);

    // A read key calling a mutation: the API's guard refuses it; the tool error is its error body.
    const read = await httpClient(keys.read);
    const refused = await read.callTool({ name: 'createApiKey', arguments: { name: 'no' } });
    expect(refused.isError).toBe(true);
    const body = refused.structuredContent as Structured;
    expect(body.http_status).toBe(403);
    expect(body.code).toBe('FORBIDDEN');
    expect(body.remediation).toEqual(expect.any(String));
    expect(body.next?.map((n) => n.path)).toContain('/v1/auth/session');
  });

  it('refuses bad arguments and an unknown resource id with the error body, and changes nothing', async () => {
    const admin = await httpClient(keys.admin);
    const missing = await admin.callTool({ name: 'getIntent', arguments: {} });
    expect(missing.isError).toBe(true);
    expect((missing.structuredContent as Structured).code).toBe('INVALID_REQUEST');
    const unknown = await admin.callTool({
      name: 'getIntent',
      arguments: { id: 'int_00000000000000000000' },
    });
    expect((unknown.structuredContent as Structured).code).toBe('NOT_FOUND');
  });

  it('serves the docs, the error table, the policy defaults and the token registry as resources', async () => {
    const client = await httpClient(keys.read);
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    for (const uri of [
      'purser://readme',
      'purser://docs/executor',
      'purser://errors',
      'purser://policies/defaults',
      'purser://tokens',
    ])
      expect(uris).toContain(uri);
    const read = async (uri: string) => {
      const { contents } = await client.readResource({ uri });
      return String((contents[0] as { text: string }).text);
    };
    expect(JSON.parse(await read('purser://errors')).POLICY_VIOLATION.status).toBe(422);
    expect(
      JSON.parse(await read('purser://tokens')).chains.map((c: { chain_id: number }) => c.chain_id),
    ).toContain(8453);
    expect(JSON.parse(await read('purser://policies/defaults')).sections).toHaveProperty('execution');
    expect(await read('purser://docs/executor')).toMatch(/^# /);
  });

  it('answers a request without a valid API key with 401 and the error body, before any MCP', async () => {
    const res = await fetch(`${service.url}/v1/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED' });
    const get = await fetch(`${service.url}/v1/mcp`, { headers: { authorization: `Bearer ${keys.read}` } });
    expect(get.status).toBe(405);
  });
});

describe('MCP over stdio (purser mcp)', () => {
  it("lists and calls the tools of a running Purser with the API key, started as the README's client configuration says, from another directory", async () => {
    // The README's configuration, with this checkout's path where it says to put it.
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const block = /```json\n(\{ "mcpServers"[\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'the README shows an mcpServers configuration').toBeTruthy();
    const configured = (
      JSON.parse(block!.replace('/absolute/path/to/purser', REPO_ROOT)) as {
        mcpServers: { purser: { command: string; args: string[] } };
      }
    ).mcpServers.purser;
    expect(configured.command).toBe('node');
    const client = new Client({ name: 'purser-test-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: configured.args,
        cwd: tmpdir(),
        env: { PATH: process.env['PATH'] ?? '', PURSER_URL: service.url, PURSER_API_KEY: keys.write },
        stderr: 'pipe',
      }),
    );
    clients.push(client);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('createIntent');
    expect(names).not.toContain('createApiKey');
    const fees = await client.callTool({ name: 'getFeeSchedule', arguments: {} });
    expect(fees.isError).toBeFalsy();
    expect(fees.structuredContent).toMatchObject({ http_status: 200 });
  });

  it('refuses to start without an API key, saying so on stderr', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'mcp'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env['PATH'] ?? '', PURSER_URL: service.url },
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(78);
    expect(err).toContain('PURSER_API_KEY is not set');
  });
});

describe('an independent MCP client', () => {
  it("the MCP inspector's CLI lists Purser's tools over streamable HTTP", async () => {
    const child = spawn(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules/@modelcontextprotocol/inspector-cli/build/index.js'),
        `${service.url}/v1/mcp`,
        '--transport',
        'http',
        '--method',
        'tools/list',
        '--header',
        `Authorization: Bearer ${keys.read}`,
      ],
      // It finds its own package.json only when `../package.json` exists from its working directory
      // (it tests the path against the working directory, then imports it relative to itself).
      { cwd: join(REPO_ROOT, 'test') },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, err).toBe(0);
    const names = (JSON.parse(out) as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(names).toContain('listIntents');
    expect(names).not.toContain('createIntent');
  });
});
