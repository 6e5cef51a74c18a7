// The prediction-market credential routes: list, store (checked against the venue and sealed at
// rest), revoke, verify with the venue, and the swapOwner calldata that rotates a Safe funder's
// signer.

import { AppError, unavailable } from '../../core/errors/app-error.ts';
import { withTransaction } from '../../core/db/database.ts';
import { actorOf, requirePrincipal } from '../../core/http/actor.ts';
import { defineRoute, type RouteDefinition } from '../../core/http/route-table.ts';
import { VenueRejected, VenueUnavailable } from '../../adapters/pm-venue/port.ts';
import {
  credentialView,
  listCredentialViews,
  noActiveCredential,
  revokeCredential,
  storeCredential,
  vetCredential,
} from './credentials.ts';
import { pmJurisdictionGate } from './gate.ts';
import {
  CREDENTIAL_ID_PARAMS,
  ROTATION_CALLDATA,
  ROTATION_QUERY,
  REVOKED_CREDENTIAL,
  STORE_CREDENTIAL_BODY,
  STORED_CREDENTIAL,
  VERIFIED_CREDENTIAL,
} from './openapi-examples.ts';
import { rotationCalldata } from './rotation.ts';
import { chainOf, credentialDeps, GATED, TAGS } from './route-deps.ts';
import {
  CREDENTIAL_LIST_DEFAULT_LIMIT,
  CredentialIdParams,
  CredentialListSchema,
  CredentialSchema,
  ListCredentialsQuery,
  RotationQuery,
  RotationSchema,
  StoreCredentialBody,
  VerifyCredentialSchema,
} from './schemas.ts';
import { getCredentialMeta } from './store.ts';
import { clobCredsOf } from './types.ts';
import { useCredential } from './usage.ts';

export const credentialRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'GET',
    url: '/v1/pm/credentials',
    operationId: 'listVenueCredentials',
    summary: "The account's venue credentials, newest first (metadata only)",
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: { querystring: ListCredentialsQuery, response: { 200: CredentialListSchema } },
    docs: {
      errors: [GATED],
      responses: { 200: 'The active credentials (and revoked ones with include_revoked), metadata only.' },
      example: { query: { limit: 50 }, status: 200, response: { credentials: [STORED_CREDENTIAL] } },
    },
    handler: async ({ deps, principal, query }) => ({
      status: 200,
      body: {
        credentials: await listCredentialViews(deps.db, requirePrincipal({ principal }).accountId, {
          limit: query.limit ?? CREDENTIAL_LIST_DEFAULT_LIMIT,
          offset: query.offset ?? 0,
          includeRevoked: query.include_revoked ?? false,
        }),
      },
    }),
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/pm/credentials',
    operationId: 'storeVenueCredential',
    summary: 'Store a venue trade credential, checked against the venue and sealed at rest',
    description:
      'polymarket: signature_type and either signer_key (hosted flow: the service signs orders) or ' +
      'signer_address (client-signed flow), with the CLOB L2 key (api_key, api_secret, api_passphrase) or, with a ' +
      'signer_key, none of them (derived from the CLOB with L1 headers). kalshi: api_key (the key id) and ' +
      'private_key_pem. The venue is asked first (an authenticated read); a refusal is 400 and nothing is ' +
      'stored. The material is sealed (AES-256-GCM bound to the account, the venue and the credential id) and ' +
      'never returned, logged or exported. See docs/prediction-markets.md.',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: { body: StoreCredentialBody, response: { 201: CredentialSchema } },
    docs: {
      errors: [
        GATED,
        {
          code: 'INVALID_REQUEST',
          when: 'a field is malformed or missing for the venue, or the venue rejected the credential (nothing stored)',
        },
        {
          code: 'EXECUTION_DISABLED',
          when: 'the operator switched off hosted credential intake (a signer_key or a kalshi key); use the client-signed flow',
        },
        {
          code: 'UNAVAILABLE',
          when: 'sealing or the venue is not configured here, or the venue could not be asked',
        },
      ],
      responses: { 201: 'The credential, stored: metadata only.' },
      example: { body: STORE_CREDENTIAL_BODY, status: 201, response: STORED_CREDENTIAL },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const deps = credentialDeps(ctx.deps);
      const vetted = await vetCredential(ctx.deps.db, deps, ctx.body, ctx.deadline);
      return ctx.mutate(async (tx) => ({
        status: 201,
        body: await storeCredential(tx, deps, actor.principal.accountId, actor, vetted),
      }));
    },
  }),
  defineRoute({
    method: 'DELETE',
    url: '/v1/pm/credentials/{id}',
    operationId: 'revokeVenueCredential',
    summary: 'Revoke a venue credential: its sealed material is destroyed',
    description:
      'The ciphertext is overwritten in the same statement that marks the credential revoked; a revoked ' +
      'credential answers 404 wherever it is used. Revoke the key at the venue too.',
    tags: TAGS,
    class: 'bearer',
    scope: 'cancel',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: { params: CredentialIdParams, response: { 200: CredentialSchema } },
    docs: {
      errors: [GATED, { code: 'NOT_FOUND', when: 'the account has no active credential with this id' }],
      responses: { 200: 'The credential, revoked (metadata only).' },
      example: { params: CREDENTIAL_ID_PARAMS, status: 200, response: REVOKED_CREDENTIAL },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      return ctx.mutate(async (tx) => ({
        status: 200,
        body: await revokeCredential(tx, ctx.deps.clock, actor.principal.accountId, actor, ctx.params.id),
      }));
    },
  }),
  defineRoute({
    method: 'POST',
    url: '/v1/pm/credentials/{id}/verify',
    operationId: 'verifyVenueCredential',
    summary: 'Ask the venue whether it still accepts a stored credential',
    description:
      'An authenticated read at the venue with the stored credential (a use: audited and watched). 200 says ' +
      'whether the venue accepts it now, with its reason when not. Takes no Idempotency-Key.',
    tags: TAGS,
    class: 'bearer',
    scope: 'write',
    wallet: false,
    idempotent: false,
    gate: pmJurisdictionGate,
    schema: { params: CredentialIdParams, response: { 200: VerifyCredentialSchema } },
    docs: {
      errors: [
        GATED,
        { code: 'NOT_FOUND', when: 'the account has no active credential with this id' },
        { code: 'UNAVAILABLE', when: 'the venue is not configured here or could not be asked' },
      ],
      responses: { 200: "The credential and the venue's answer." },
      example: { params: CREDENTIAL_ID_PARAMS, status: 200, response: VERIFIED_CREDENTIAL },
    },
    handler: async (ctx) => {
      const actor = actorOf(ctx);
      const accountId = actor.principal.accountId;
      const deps = credentialDeps(ctx.deps);
      const venues = deps.venues;
      if (!venues) {
        throw unavailable('No prediction-market venue is configured here.', {
          remediation: 'The operator configures the venue URLs (docs/operations.md).',
          next: [],
        });
      }
      // The use is recorded (audit, watch) whatever the venue answers.
      const used = await withTransaction(ctx.deps.db, (tx) =>
        useCredential(tx, deps, {
          accountId,
          credentialId: ctx.params.id,
          operation: 'authenticate',
          actor,
        }),
      );
      if (!used) throw noActiveCredential(ctx.params.id);
      ctx.deadline.check(`asking ${used.row.venue} about the credential`);
      let check;
      try {
        const m = used.material;
        check =
          m.venue === 'polymarket'
            ? await venues.polymarket.checkApiCredentials(
                used.row.signer_address as `0x${string}`,
                clobCredsOf(m),
              )
            : await venues.kalshi.checkApiKey({ keyId: m.api_key, privateKeyPem: m.private_key_pem });
      } catch (err) {
        if (err instanceof VenueRejected) check = { ok: false as const, reason: err.message };
        else if (err instanceof VenueUnavailable) {
          throw new AppError('UNAVAILABLE', `${used.row.venue} could not be asked: ${err.message}`, {
            remediation: 'Retry in a minute.',
            next: [],
          });
        } else throw err;
      }
      const row = await getCredentialMeta(ctx.deps.db, accountId, ctx.params.id);
      return {
        status: 200,
        body: {
          credential: credentialView(row!),
          accepted: check.ok,
          reason: check.ok ? null : check.reason,
          checked_at: ctx.deps.clock.now().toISOString(),
        },
      };
    },
  }),
  defineRoute({
    method: 'GET',
    url: '/v1/pm/credentials/{id}/rotation',
    operationId: 'venueCredentialRotation',
    summary: "The swapOwner calldata that replaces a Safe funder's signer (never submitted by Purser)",
    description:
      'For a polymarket credential of signature type 2: swapOwner(prev_owner, old_owner, new_owner) for the ' +
      "Safe to execute, prev_owner read from the Safe's live owner list (the sentinel 0x…01 when the signer " +
      'heads it, as in a 1-of-1 Safe), with the ordered steps and the rotation policy. Execute it from the ' +
      'Safe, store a credential with the new key, revoke this one.',
    tags: TAGS,
    class: 'bearer',
    scope: 'read',
    wallet: false,
    gate: pmJurisdictionGate,
    schema: { params: CredentialIdParams, querystring: RotationQuery, response: { 200: RotationSchema } },
    docs: {
      errors: [
        GATED,
        { code: 'NOT_FOUND', when: 'the account has no active credential with this id' },
        { code: 'INVALID_REQUEST', when: 'new_owner is the zero address, the sentinel or the Safe itself' },
        {
          code: 'NOT_APPLICABLE',
          when: 'not rotatable: a kalshi credential, a funder that is not a Safe, a signer that is no longer an owner, or a new_owner that already is one',
        },
        { code: 'UNAVAILABLE', when: 'the chain RPC did not answer' },
      ],
      responses: { 200: 'The calldata and the steps.' },
      example: {
        params: CREDENTIAL_ID_PARAMS,
        query: ROTATION_QUERY,
        status: 200,
        response: ROTATION_CALLDATA,
      },
    },
    handler: async (ctx) => ({
      status: 200,
      body: await rotationCalldata(
        ctx.deps.db,
        chainOf(ctx.deps),
        ctx.deps.config.pm.chainId,
        requirePrincipal(ctx).accountId,
        ctx.params.id,
        ctx.query.new_owner,
        ctx.deadline,
      ),
    }),
  }),
];
