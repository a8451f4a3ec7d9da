import type { Type } from '@nestjs/common';
import type { RedisOptions } from 'ioredis';
import type { ConfigurableModuleAsyncOptions } from '@nestjs/common';
import type { McpAuthorizeFn, McpAuthorizer } from '../../interfaces/principal.interface';
import type { McpServerStores } from '../../persistence/store-providers';
import type { McpStreamOptions } from '../http/mcp-stream.options';
import type { McpLimitsOptions } from '../mcp-limits.options';
import type { McpPubSubOptions } from '../pubsub/mcp-pubsub.interface';
import type { McpTasksOptions } from '../tasks/mcp-tasks.options';
import type { McpRetentionOptions } from '../../persistence/retention/mcp-retention.options';
import type { McpSessionCacheOptions } from '../sessions/mcp-session-cache.options';
import type { McpOAuthOptions } from '../oauth/mcp-oauth.options';
import type { McpAuditOptions } from '../../persistence/interfaces/mcp-audit-options.interface';
import type { McpShutdownOptions } from '../shutdown/mcp-shutdown.options';
import type { McpTelemetryOptions } from '../../telemetry/mcp-telemetry.options';

/** Identity the server announces in its `initialize` result. */
export interface McpServerInfoOptions {
  /**
   * Name of the server.
   * @default 'durable-mcp'
   */
  name?: string;
  /**
   * Version of the server.
   * @default (the package version)
   */
  version?: string;
  /** Optional instructions the client may show to its model. */
  instructions?: string;
  /** Optional human-readable title. */
  title?: string;
}

/** Inbound session settings. */
export interface McpSessionOptions {
  /**
   * A session not used for this long answers 404, like an unknown one.
   * @default 3_600_000 (one hour)
   */
  idleTtlMs?: number;
  /**
   * The in-process session cache: `true` or `{ ttlMs, maxEntries }` serves a session read from
   * the store from memory for `ttlMs` (ended sessions are dropped on every replica over the
   * session bus); `false` checks the store on every request.
   * @default true (`{ ttlMs: 1000, maxEntries: 10_000 }`)
   */
  cache?: boolean | McpSessionCacheOptions;
}

/** How the mount's stores treat a slow or absent database. */
export interface McpDatabaseOptions {
  /**
   * Bound of every database operation a request waits for (session lookup and writes, the
   * group-committed audit row, subscriptions): past it the request is answered 503 with
   * `Retry-After` instead of waiting for the database. Set the pg pool's own limits as well
   * (`connectionTimeoutMillis`, `statement_timeout`, see the README's "Failure behaviour").
   * @default 5000
   */
  timeoutMs?: number;
}

/** Settings of stateless (2026-07-28) requests. */
export interface McpStatelessOptions {
  /**
   * Secret (at least 16 bytes) that seals the `requestState` of `input_required` results with
   * HMAC-SHA256. Every replica must share it: a retry may reach any of them.
   * @default (a random secret per process: fine for a single replica; logged at boot)
   */
  requestStateSecret?: string | Buffer;
  /**
   * How long a client may take to answer an `input_required` result before the state expires.
   * @default 600_000 (ten minutes)
   */
  requestStateTtlMs?: number;
}

/** A caching hint: how long a result stays fresh and who may share it. */
export interface McpCacheHint {
  /**
   * How long the result stays fresh, in milliseconds.
   * @default (60_000 for lists and `server/discover`, 0 for `resources/read`)
   * @minimum 0
   */
  ttlMs?: number;
  /**
   * Who may share the cached result.
   * @default ('public' for lists and `server/discover`, 'private' for `resources/read`)
   */
  scope?: 'public' | 'private';
}

/** Caching hints of a mount: lists and discovery, and resource reads (often per user). */
export interface McpCacheOptions extends McpCacheHint {
  /** Hints of `resources/read` results. */
  read?: McpCacheHint;
}

/**
 * Expert settings of a mount: bounds, caps, stream buffers and resumption, cache hints, Redis
 * names, audit commit mode, span payloads and the shutdown drain. Their defaults suit most
 * deployments; each is documented with its default.
 */
export interface McpAdvancedOptions {
  /** Database bounds of the mount's TypeORM stores. */
  database?: McpDatabaseOptions;
  /** How the mount's audit rows are committed (`commit: 'sync' | 'async'`). */
  audit?: McpAuditOptions;
  /**
   * What the mount's OpenTelemetry spans record beyond the default attributes
   * (`{ recordPayloads: true }` adds arguments and results). Spans exist only when the host
   * registers an OpenTelemetry SDK.
   */
  telemetry?: McpTelemetryOptions;
  /**
   * Largest accepted request body, in bytes; larger bodies get 413.
   * @default 4_194_304 (4 MiB)
   */
  maxBodyBytes?: number;
  /**
   * Deadline for receiving a whole request body, in milliseconds, counted from the moment the
   * endpoint starts reading it. A body still incomplete then (a client trickling bytes) gets
   * 408 with a JSON-RPC body and the connection is closed.
   * @default 30_000 (30 seconds)
   */
  bodyTimeoutMs?: number;
  /**
   * Page size of `tools/list`.
   * @default 100
   */
  pageSize?: number;
  /**
   * Names and bounds of the mount's Redis traffic (channel prefix, command timeout); the
   * connection itself is `redis`.
   */
  pubsub?: McpPubSubOptions;
  /** SSE stream settings (client request timeout, keep-alive, reconnection delay). */
  streams?: McpStreamOptions;
  /** Caps per principal and per session (sessions, streams, subscriptions). */
  limits?: McpLimitsOptions;
  /**
   * Caching hints (`ttlMs`, `cacheScope`) on the cacheable results of stateless requests. A
   * handler that sets its own hints on a result keeps them.
   */
  cache?: McpCacheOptions;
  /**
   * Graceful shutdown: how long requests in flight may run once the app drains (SIGTERM with
   * `enableShutdownHooks()`), and the `Retry-After` of the 503 that refuses new ones meanwhile.
   * @default { drainTimeoutMs: 10_000, quietPeriodMs: 500, retryAfterMs: 1000 }
   */
  shutdown?: McpShutdownOptions;
}

/**
 * Options of one MCP mount, given to `McpModule.forRoot` or returned by the `forRootAsync`
 * factory.
 */
export interface McpModuleOptions {
  /**
   * Required. Accepts or rejects bearer tokens: a function `(token, request) => principal | null`
   * or an injectable class with an `authorize` method (resolved through DI, so it must be a
   * provider the module can see). There is no default: a mount without auth does not boot.
   * @validate auth
   */
  auth: McpAuthorizeFn | Type<McpAuthorizer>;
  /**
   * Admit requests without an `Authorization` header as the anonymous principal
   * (`MCP_ANONYMOUS_PRINCIPAL`: key `anonymous`, no scopes, no roles). It sees and calls only the
   * handlers marked `public: true`; a `tools/call` of any other tool answers 401 with the mount's
   * `WWW-Authenticate` challenge, so a client learns it must sign in. A request with a token the
   * authorizer rejects still gets 401: it is never downgraded to anonymous. The mount's
   * `oauth.requiredScopes` apply to tokens, not to the anonymous principal. All anonymous callers
   * share one principal: an anonymous session is bound to it, so its session id is its only
   * secret, and the `limits` per principal are shared by all anonymous callers.
   * @default false (a request without a token gets 401)
   */
  anonymous?: boolean;
  /** Identity and instructions announced by `initialize`. */
  server?: McpServerInfoOptions;
  /**
   * Which providers' `@McpTool` methods this mount serves.
   * @default (every provider of the app that has `@McpTool` methods)
   */
  providers?: Type<unknown>[];
  /**
   * The Redis of the mount (URL or ioredis options), shared by everything in it that needs one:
   * the session bus between replicas (the client's answers to elicitation, sampling and roots
   * requests, cancellations, session notifications and the session cache's invalidations), the
   * resumption log of SSE streams, the task queue (Bull) and the retention schedule. Each
   * process keeps one subscriber and one publisher connection per distinct setting, shared by
   * its mounts. With several replicas, also set `stateless.requestStateSecret`.
   * @default (none: everything stays in process; run a single replica)
   */
  redis?: string | RedisOptions;
  /** Session settings. */
  sessions?: McpSessionOptions;
  /**
   * Origins allowed to call the endpoint from a browser (DNS-rebinding protection). Requests
   * without an `Origin` header are always allowed. `'*'` allows every origin.
   * @default (localhost, 127.0.0.1 and [::1] on any port)
   */
  allowedOrigins?: string[] | '*';
  /**
   * Task-augmented tool calls (experimental tasks of 2025-11-25): where they run (a Bull queue on
   * Redis, else in process), their lifetimes and polling interval.
   */
  tasks?: McpTasksOptions;
  /**
   * Retention of the mount's rows (durations in milliseconds; off by default): inbound
   * `mcp_events` rows, ended or idle sessions with their subscriptions, and tasks past their ttl.
   * Runs once per `intervalMs` on one replica (a Bull repeatable job with the mount's Redis,
   * else a timer and a PostgreSQL advisory lock), in bounded batches.
   * @validate retention
   */
  retention?: McpRetentionOptions;
  /** Stateless (2026-07-28) requests: how multi round-trip state is sealed. */
  stateless?: McpStatelessOptions;
  /**
   * Serve this mount as an OAuth 2.1 resource server: Protected Resource Metadata (RFC 9728) at
   * `/.well-known/oauth-protected-resource<path>`, 401 challenges that name it, and 403
   * `insufficient_scope` for tokens without `requiredScopes`. Pair it with a verifier as `auth`
   * (`JwtVerifier`, `IntrospectionVerifier`).
   * @default (none: plain bearer authentication by `auth`)
   * @validate oauth
   */
  oauth?: McpOAuthOptions;
  /**
   * Expert settings: request bounds (body size and deadline, page size, database timeout), caps
   * per principal (`limits`), SSE stream buffers and resumption (`streams`), cache hints, Redis
   * names, the audit commit mode, span payloads and the shutdown drain.
   */
  advanced?: McpAdvancedOptions;
}

/** Synchronous options that shape the module graph; they cannot come from an async factory. */
export interface McpModuleExtras {
  /**
   * Name of this mount; several mounts in one app need distinct names.
   * @default 'default'
   */
  mount: string;
  /**
   * HTTP path of the endpoint.
   * @default '/mcp'
   */
  path: string;
  /**
   * Register the module globally, so modules that do not import it inject the mount's toolset,
   * options and services. Off by default on both `McpModule` and `McpClientModule`: the module that
   * imports a mount's `forRoot` (and modules it re-exports it to) injects what the mount provides,
   * which keeps the module graph explicit, and several global mounts of one app would export the
   * same tokens (e.g. `McpRetentionService`).
   * @default false
   */
  isGlobal: boolean;
  /**
   * Stores to use instead of the TypeORM ones (sessions, subscriptions, events, handler switches), each a class Nest
   * instantiates in the mount or a ready instance. A mount whose every store is swapped needs no
   * TypeORM connection, e.g. with the in-memory stores of `durable-mcp/testing` in a host's tests.
   * @default (every store on TypeORM)
   */
  stores?: McpServerStores;
}

/** What `McpModule.forRoot` takes: the options of one mount and its synchronous extras. */
export type McpModuleForRootOptions = McpModuleOptions & Partial<McpModuleExtras>;

/**
 * What `McpModule.forRootAsync` takes: `useFactory` (with `imports` and `inject`), `useClass` or
 * `useExisting` producing `McpModuleOptions`, plus the synchronous extras.
 */
export type McpModuleAsyncOptions = ConfigurableModuleAsyncOptions<McpModuleOptions, 'createMcpOptions'> &
  Partial<McpModuleExtras>;
