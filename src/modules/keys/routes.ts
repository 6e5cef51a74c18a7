import { actorOf } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import {
  CreateKeyBody,
  CreateKeyResponse,
  EnrollKeysBody,
  EnrollKeysResponse,
  KeyIdParams,
  ListKeysResponse,
  RevokeKeyResponse,
  RotateKeysBody,
  RotateKeysResponse,
} from './schemas.ts';
import {
  createdKeyBody,
  createKeys,
  listKeys,
  parseCreateRequest,
  parseEnrollRequest,
  REPLAY_REMEDIATION,
  revokeKey,
  rotateKeys,
} from './service.ts';

const TAGS = ['api keys'];
/** Responses that carry a token must not be kept by any cache on the way. */
const NO_STORE = { 'cache-control': 'no-store' };

// The examples of the OpenAPI document: a read-only reporting key and an agent's wallet.
const KEY_GRANT = {
  id: 'key_g0mvy9rdymc7z3y9147q',
  name: 'reporting',
  scopes: ['read'],
  created_at: '2026-03-14T09:28:02.117Z',
  expires_at: '2026-04-13T09:28:02.117Z',
  allowed_ips: null,
  wallets: null,
};
const AGENT_WALLET = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

export const keysRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/keys',
    operationId: 'listApiKeys',
    summary: "The account's API keys, newest first, including revoked and expired ones",
    description:
      'Never returns token material, not even its first characters: a key is recognised by its `id`, which its creation answered together with the token.',
    tags: TAGS,
    class: 'bearer',
    scope: 'admin-or-supervisor',
    wallet: false,
    schema: { response: { 200: ListKeysResponse } },
    docs: {
      errors: [],
      responses: { 200: "The account's API keys, newest first, without token material." },
      example: {
        status: 200,
        response: {
          keys: [
            {
              ...KEY_GRANT,
              status: 'active',
              revoked_at: null,
              rotated_from: null,
              rotated_to: null,
              created_by: 'session:ses_guki3pj5f55uyvhzl4wk',
              last_used_at: '2026-03-14T11:02:45.930Z',
            },
          ],
        },
      },
    },
    handler: async (ctx) => {
      const { principal } = actorOf(ctx);
      return {
        status: 200,
        body: { keys: await listKeys(ctx.deps.db, ctx.deps.clock, principal.accountId) },
      };
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/keys',
    operationId: 'createApiKey',
    summary: 'Create an API key; the token is returned once',
    description:
      "Defaults: scopes ['read'], expires_in_days 90. A key caller can only make keys within its own " +
      'scopes, wallet pin and IP pin (an IP-pinned caller passes its pin on when allowed_ips is omitted).',
    tags: TAGS,
    class: 'bearer',
    scope: 'admin',
    wallet: false,
    schema: { body: CreateKeyBody, response: { 201: CreateKeyResponse } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when:
            'an allowed_ips entry is not an address or CIDR block, a wallet or IP repeats, or the combination is ' +
            'impossible (a wallet-pinned key cannot hold admin)',
        },
        {
          code: 'FORBIDDEN',
          when: "the new key would exceed the calling key's scopes, wallet pin or IP pin",
        },
      ],
      responses: { 201: 'The new key, with its token shown this once (null in an Idempotency-Key replay).' },
      example: {
        body: { name: 'reporting', scopes: ['read'], expires_in_days: 30 },
        status: 201,
        response: { ...KEY_GRANT, token: 'psk_Lv8T5e3EAxvQGY3A3KdpMIaSrCyMbqG8J9lMD3r8xR8' },
      },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const spec = parseCreateRequest(ctx.body);
      return ctx.mutate(async (tx) => {
        const [key] = await createKeys(tx, ctx.deps.clock, actor, [spec], 'create');
        if (!key) throw new Error('createKeys returned no key');
        return {
          status: 201,
          body: createdKeyBody(key, true),
          headers: NO_STORE,
          replayBody: { ...createdKeyBody(key, false), remediation: REPLAY_REMEDIATION },
        };
      });
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/keys/enroll',
    operationId: 'enrollAgentKeys',
    summary: 'Mint one key per agent wallet, each pinned to exactly that wallet (all or none)',
    tags: TAGS,
    class: 'bearer',
    scope: 'admin',
    wallet: false,
    schema: { body: EnrollKeysBody, response: { 201: EnrollKeysResponse } },
    docs: {
      errors: [
        {
          code: 'INVALID_REQUEST',
          when: 'two agents name the same wallet, or an agent asks for admin (a wallet-pinned key cannot hold it)',
        },
        {
          code: 'FORBIDDEN',
          when: "a key would exceed the calling key's scopes, wallet pin or IP pin",
        },
      ],
      responses: {
        201: 'One key per agent, in request order, tokens shown this once (null in an Idempotency-Key replay).',
      },
      example: {
        body: { agents: [{ wallet: AGENT_WALLET, name: 'agent-1', scopes: ['read', 'write'] }] },
        status: 201,
        response: {
          keys: [
            {
              id: 'key_axou7l6rndp02owg33sn',
              token: 'psk_o8_mS7JQyig9b-sqQ1Cfv2jr2vzyIK8Ui8rxvsbwIMo',
              name: 'agent-1',
              scopes: ['read', 'write'],
              created_at: '2026-03-14T09:31:40.256Z',
              expires_at: '2026-06-12T09:31:40.256Z',
              allowed_ips: null,
              wallets: [AGENT_WALLET.toLowerCase()],
            },
          ],
        },
      },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const specs = parseEnrollRequest(ctx.body);
      return ctx.mutate(async (tx) => {
        const keys = await createKeys(tx, ctx.deps.clock, actor, specs, 'enroll');
        return {
          status: 201,
          body: { keys: keys.map((k) => createdKeyBody(k, true)) },
          headers: NO_STORE,
          replayBody: { keys: keys.map((k) => createdKeyBody(k, false)), remediation: REPLAY_REMEDIATION },
        };
      });
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/keys/rotate',
    operationId: 'rotateApiKeys',
    summary: 'Replace keys by new ones with the same grants (all or nothing)',
    description:
      'Scopes, wallet pin and IP pin are copied server-side. The old key is revoked at once, or keeps ' +
      'working for overlap_seconds but never past its own expiry.',
    tags: TAGS,
    class: 'bearer',
    scope: 'admin',
    wallet: false,
    schema: { body: RotateKeysBody, response: { 200: RotateKeysResponse } },
    docs: {
      errors: [
        {
          code: 'NOT_FOUND',
          when: 'an id is not an active, not yet rotated key of the account (nothing rotated)',
        },
        {
          code: 'FORBIDDEN',
          when: "a named key exceeds the calling key's scopes, wallet pin or IP pin",
        },
      ],
      responses: {
        200: 'Each old key with when it stops working, and its replacement, tokens shown this once (null in an Idempotency-Key replay).',
      },
      example: {
        body: { key_ids: [KEY_GRANT.id], overlap_seconds: 300 },
        status: 200,
        response: {
          rotated: [
            {
              old_id: KEY_GRANT.id,
              old_expires_at: '2026-03-20T16:05:12.048Z',
              new: {
                ...KEY_GRANT,
                id: 'key_we89szxeg683blu4v8up',
                token: 'psk_I_rIZ3Gv8asW6BRWDPjQEeZkmpV_2U6Pv6iQ9qhaWwg',
                created_at: '2026-03-20T16:00:12.048Z',
                expires_at: '2026-04-19T16:00:12.048Z',
              },
            },
          ],
        },
      },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const overlap = ctx.body.overlap_seconds ?? 0;
      const result = await ctx.mutate(async (tx) => {
        const rotations = await rotateKeys(tx, ctx.deps.clock, actor, ctx.body.key_ids, overlap);
        const shape = (withToken: boolean) =>
          rotations.map((r) => ({
            old_id: r.oldId,
            old_expires_at: r.oldExpiresAt.toISOString(),
            new: createdKeyBody(r.issued, withToken),
          }));
        return {
          status: 200,
          body: { rotated: shape(true) },
          headers: NO_STORE,
          replayBody: { rotated: shape(false), remediation: REPLAY_REMEDIATION },
        };
      });
      // Committed: this process drops the old keys now; the others hear the NOTIFY.
      for (const id of ctx.body.key_ids) ctx.deps.credentialCache?.invalidate(id);
      return result;
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/v1/keys/{id}',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key at once',
    tags: TAGS,
    class: 'bearer',
    scope: 'admin-or-supervisor',
    wallet: false,
    schema: { params: KeyIdParams, response: { 200: RevokeKeyResponse } },
    docs: {
      errors: [
        { code: 'NOT_FOUND', when: 'the account has no active key with this id' },
        {
          code: 'FORBIDDEN',
          when: 'the calling key is wallet-pinned and this key is unpinned or reaches wallets outside that pin',
        },
      ],
      responses: { 200: 'The key is revoked; it gets 401 from now on, in every process.' },
      example: {
        params: { id: KEY_GRANT.id },
        status: 200,
        response: { id: KEY_GRANT.id, revoked: true },
      },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const result = await ctx.mutate(async (tx) => {
        await revokeKey(tx, ctx.deps.clock, actor, ctx.params.id);
        return { status: 200, body: { id: ctx.params.id, revoked: true } };
      });
      ctx.deps.credentialCache?.invalidate(ctx.params.id);
      return result;
    },
  }),
];
