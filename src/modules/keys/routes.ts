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
