// The declarative route table: every endpoint is registered through a RouteDefinition, and the
// guard, the idempotency layer, the OpenAPI document and the scope-matrix test all read it.

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import type { CoreConfig } from '../settings.ts';
import type { ErrorCode } from '../errors/codes.ts';
import type { Clock } from '../clock.ts';
import type { Db, DbExecutor, Tx } from '../db/database.ts';
import type { Deadline } from './deadline.ts';
import type { RouteResult, StatementKey } from './results.ts';

export type { RouteResult, StatementKey } from './results.ts';

/** public: no credential. bearer: session or API key. executor: signed in as the treasury executor. operator: operator token. */
export type RouteClass = 'public' | 'bearer' | 'executor' | 'operator';
export type Scope = 'read' | 'write' | 'admin' | 'supervisor';
/**
 * Which API-key scopes a bearer route admits (a session admits every rule):
 * read: read, write, supervisor, admin. write: write, admin. cancel (cancels and revocations of
 * what a writer opened): write, supervisor, admin. supervisor (panic): supervisor, admin.
 * admin: admin. admin-or-supervisor (list and revoke keys): admin, supervisor.
 */
export type ScopeRule = 'read' | 'write' | 'cancel' | 'supervisor' | 'admin' | 'admin-or-supervisor';

/** Where a wallet-bearing route finds the wallet(s) it acts for. */
export type WalletLocator = FieldWalletLocator | ResourceWalletLocator;

export interface FieldWalletLocator {
  in: 'body' | 'query' | 'params';
  field: string;
  /** The field holds an array of wallets, or an array of objects each with `itemField`. */
  many?: boolean;
  itemField?: string;
}

/**
 * The wallet of the resource the path names (`/v1/delegations/{id}`), looked up by the guard
 * before the handler runs, only for wallet-pinned keys. `resolve` reads outside any transaction
 * and returns null when the account has no such resource (a pinned key is then denied).
 */
export interface ResourceWalletLocator {
  in: 'resource';
  resource: string;
  /** `body` is the request's parsed body, for a resource a body names (a prepared order's id). */
  resolve(
    db: DbExecutor,
    accountId: string,
    params: Record<string, unknown>,
    body?: unknown,
  ): Promise<string | null>;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface RouteSchemas {
  body?: TSchema;
  querystring?: TSchema;
  params?: TSchema;
  /** Response schemas by status, for the OpenAPI document. */
  response: Record<number, TSchema>;
}

type Part<S extends RouteSchemas, K extends 'body' | 'querystring' | 'params'> = S[K] extends TSchema
  ? Static<S[K]>
  : undefined;

/** The authenticated caller. Filled in by the authenticator port (identity module). */
export interface Principal {
  accountId: string;
  kind: 'session' | 'key';
  credentialId: string;
  scopes: Scope[];
  /** Wallet pin of an API key, or null when unpinned. */
  wallets: string[] | null;
  address: string;
}

/** Resolves the bearer credential of a request; the identity module provides it. */
export interface Authenticator {
  /** Throws UNAUTHORIZED or FORBIDDEN. */
  authenticate(req: FastifyRequest, route: RouteDefinition): Promise<Principal>;
}

/**
 * The dependencies every handler gets as `ctx.deps`. The HTTP core itself reads only the members
 * declared here; the application merges all of its dependencies into this interface
 * (`AppDeps` in src/deps.ts), so handlers see them without the core importing the layers above.
 */
export interface RouteDeps {
  config: CoreConfig;
  db: Db;
  clock: Clock;
  authenticator: Authenticator;
}

export interface RouteContext<S extends RouteSchemas> {
  req: FastifyRequest;
  reply: FastifyReply;
  body: Part<S, 'body'>;
  query: Part<S, 'querystring'>;
  params: Part<S, 'params'>;
  deps: RouteDeps;
  deadline: Deadline;
  requestId: string;
  principal: Principal | null;
  clientIp: string;
  userAgent: string | null;
  /**
   * Runs `fn` in one transaction together with the Idempotency-Key claim and the stored
   * response, so a retry replays exactly what the first attempt committed.
   */
  mutate(fn: (tx: Tx) => Promise<RouteResult>): Promise<RouteResult>;
  /**
   * The request's Idempotency-Key and its fingerprint (method, path, query, body), or null without
   * one: for a route that records the key on its own resource because its effect leaves the
   * database (an order sent to a venue) and cannot commit with the key (docs/decisions.md).
   */
  requestKey(): { key: string; fingerprint: string } | null;
  /**
   * For work that writes nothing to the database: `fn` runs outside any transaction (use the
   * pool freely), and its result is stored and replayed under the Idempotency-Key. Inside
   * `mutate`, use only `tx`: the embedded database has one connection.
   */
  replayable(fn: () => Promise<RouteResult>): Promise<RouteResult>;
  /**
   * For a write that is one statement committing alone (a booking through the ledger's batcher,
   * batched with concurrent ones): the Idempotency-Key's claim and stored answer go into that
   * statement (`write` gets them as SQL, null without a key). `write` returns null when it wrote
   * nothing and the request needs a transaction: `fallback` then runs as under `mutate`.
   */
  mutateAlone(
    write: (key: StatementKey | null) => Promise<RouteResult | null>,
    fallback: (tx: Tx) => Promise<RouteResult>,
  ): Promise<RouteResult>;
}

/**
 * An error a route's own logic can answer: its code, with the status when it differs from the
 * error table's, and optionally in words when this route answers it.
 */
export type DocumentedError = ErrorCode | { code: ErrorCode; status?: number; when?: string };

/**
 * What the OpenAPI document says about a route beyond its schemas. The document adds the errors
 * every route of its kind can answer (its class's 401 and 403, validation's 400, the rate limit's
 * 429, an Idempotency-Key's conflicts, the time budget's 504, 500 and 503); `errors` lists the
 * rest. The suite validates the example against the route's schemas.
 */
export interface RouteDocs {
  /** The codes this route's handler and services raise, beyond those its kind implies. */
  errors: DocumentedError[];
  /** Each success status of `schema.response`, in words. */
  responses: Record<number, string>;
  /** One example request and the answer it gets. */
  example: RouteExample;
  /** The media type of the success answers when not JSON (an HTML page, a CSV file). */
  contentType?: string;
}

export interface RouteExample {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  /** One of the success statuses of `schema.response`. */
  status: number;
  /** The response body (a string for text answers such as HTML or CSV). */
  response: unknown;
}

export interface RouteDefinition<S extends RouteSchemas = RouteSchemas> {
  method: HttpMethod;
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  class: RouteClass;
  /** Required scope of bearer routes; ignored on other classes. */
  scope?: ScopeRule;
  /** How a wallet-bearing route finds its wallet; false when the route is not wallet-bearing. */
  wallet: WalletLocator | false;
  /** Mutations honour Idempotency-Key (default: every method but GET). */
  idempotent?: boolean;
  /** Per-IP rate limit (default: public routes). */
  rateLimited?: boolean;
  /** Mounted only in development (dev helpers under /v1/dev/). */
  devOnly?: boolean;
  /** Overrides the configured time budget, in milliseconds. */
  budgetMs?: number;
  /**
   * For a route whose own success retires the caller's credential (offboarding): when the guard
   * answers 401 to a request carrying an Idempotency-Key, names the account whose stored response
   * of this route the credential may still replay, or null. Such a caller gets that replay or the
   * guard's 401; the handler never runs.
   */
  retiredReplay?(req: FastifyRequest, deps: RouteDeps): Promise<string | null>;
  /**
   * Runs first, before the body is read and before the guard: a throw (an AppError) answers at
   * once and nothing else runs (the prediction-market routes' jurisdiction gate).
   */
  gate?(req: FastifyRequest, deps: RouteDeps): Promise<void>;
  schema: S;
  /** The route's entry in the OpenAPI document: its errors, response descriptions and example. */
  docs: RouteDocs;
  handler(ctx: RouteContext<S>): Promise<RouteResult>;
}

/** Whether a route honours Idempotency-Key: its own say, else every method but GET. */
export function isIdempotent(route: RouteDefinition): boolean {
  return route.idempotent ?? route.method !== 'GET';
}

/** Whether a route is rate limited per IP: its own say, else public routes. */
export function isRateLimited(route: RouteDefinition): boolean {
  return route.rateLimited ?? route.class === 'public';
}

/** Keeps the schema types of one route together; the table itself is a plain array. */
export function defineRoute<S extends RouteSchemas>(route: RouteDefinition<S>): RouteDefinition {
  return route as unknown as RouteDefinition;
}
