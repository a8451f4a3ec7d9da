import type { Type } from '@nestjs/common';
import type { McpRedisConnection } from '../../redis-connection';
import type { ConfigurableModuleAsyncOptions } from '@nestjs/common';
import type { McpAuthorizeFn, McpAuthorizer } from '../../interfaces/principal.interface';
import type { McpServerStores } from '../../persistence/store-providers';
import type { McpRetentionOptions } from '../../persistence/retention/mcp-retention.options';
import type { McpAuditOptions } from '../../persistence/interfaces/mcp-audit-options.interface';
import type { McpTelemetryOptions } from '../../telemetry/mcp-telemetry.options';

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
  server?: McpModuleOptions.Server;
  /**
   * Which providers' `@McpTool` methods this mount serves.
   * @default (every provider of the app that has `@McpTool` methods)
   */
  providers?: Type<unknown>[];
  /**
   * The Redis of the mount (a `redis://` URL, ioredis options, with `sentinels` and `name` for a
   * Sentinel group, or `{ cluster: { nodes, options } }` for a Cluster), shared by everything in it
   * that needs one: the session bus between replicas (the client's answers to elicitation,
   * sampling and roots requests, cancellations, session notifications and the session cache's
   * invalidations), the resumption log of SSE streams, the rate limits, the task queue (Bull) and
   * the retention schedule. Each process keeps one subscriber and one publisher connection per
   * distinct setting, shared by its mounts. With several replicas, also set
   * `stateless.requestStateSecret`.
   * @default (none: everything stays in process; run a single replica)
   * @validate redis
   */
  redis?: McpRedisConnection;
  /** Session settings. */
  sessions?: McpModuleOptions.Sessions;
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
  tasks?: McpModuleOptions.Tasks;
  /**
   * A budget of `tools/call`s per principal over the whole mount (`{ limit, windowMs }`), every
   * tool counted, besides the budgets tools declare with `@McpTool({ rateLimit })`. A call over
   * it answers HTTP 429 with JSON-RPC `-32000`, `Retry-After` and `data.retryAfterMs`, and the
   * tool does not run. Counted in Redis with the mount's `redis` (one budget for every replica),
   * in process memory otherwise. While Redis is unreachable each replica counts in its own memory
   * and logs the outage. All anonymous callers share one budget.
   * @default (none: only the tools' own budgets)
   * @validate rateLimit
   */
  rateLimit?: McpModuleOptions.RateLimit;
  /**
   * Retention of the mount's rows (durations in milliseconds; off by default): inbound
   * `mcp_events` rows, ended or idle sessions with their subscriptions, and tasks past their ttl.
   * Runs once per `intervalMs` on one replica (a Bull repeatable job with the mount's Redis,
   * else a timer and a PostgreSQL advisory lock), in bounded batches.
   * @validate retention
   */
  retention?: McpRetentionOptions;
  /** Stateless (2026-07-28) requests: how multi round-trip state is sealed. */
  stateless?: McpModuleOptions.Stateless;
  /**
   * Serve this mount as an OAuth 2.1 resource server: Protected Resource Metadata (RFC 9728) at
   * `/.well-known/oauth-protected-resource<path>`, 401 challenges that name it, and 403
   * `insufficient_scope` for tokens without `requiredScopes`. Pair it with a verifier as `auth`
   * (`JwtVerifier`, `IntrospectionVerifier`).
   * @default (none: plain bearer authentication by `auth`)
   * @validate oauth
   */
  oauth?: McpModuleOptions.OAuth;
  /**
   * Expert settings: request bounds (body size and deadline, page size, database timeout), caps
   * per principal (`limits`), SSE stream buffers and resumption (`streams`), cache hints, Redis
   * names, the audit commit mode, span payloads and the shutdown drain.
   */
  advanced?: McpModuleOptions.Advanced;
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

/**
 * The option groups of `McpModuleOptions`, one per key: `McpModuleOptions.Sessions` is the type of
 * `sessions`, `McpModuleOptions.Limits` that of `advanced.limits`, and so on.
 */
export declare namespace McpModuleOptions {
  /** Identity the server announces in its `initialize` result. */
  export interface Server {
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
  export interface Sessions {
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
    cache?: boolean | SessionCache;
  }
  /**
   * The in-process cache of a mount's 2025-era sessions (`sessions.cache`). A session found in the
   * store is served from memory for `ttlMs`, so a request needs no database round trip for its
   * session; a DELETE, an idle expiry or a `logging/setLevel` on any replica drops the cached copy
   * on every replica over the session bus (Redis pub/sub with the mount's `redis`). While a replica's
   * Redis subscription is down it asks the store on every request; where messages are lost without
   * the replica noticing, `ttlMs` is the longest it may go on serving the old record.
   */
  export interface SessionCache {
    /**
     * How long a session read from the store is served from memory before the store is asked
     * again, counted from the read (using the session does not extend it). The bound on serving a
     * session ended on another replica while the bus is down.
     * @default 1000
     */
    ttlMs?: number;
    /**
     * Most sessions kept per mount and process; beyond it the least recently used one is dropped.
     * @default 10_000
     */
    maxEntries?: number;
  }
  /**
   * How a mount runs task-augmented tool calls (`tasks` option). Tasks run on a Bull queue when the
   * mount has Redis (its `redis` option): every replica's process consumes it, so
   * any replica creates a task and any worker runs it. Without Redis they run in the process that
   * created them.
   */
  export interface Tasks {
    /**
     * How many tasks this process runs at once; `0` makes a replica that creates and serves tasks
     * but runs none (on the queue only).
     * @default 4
     * @minimum 0
     */
    concurrency?: number;
    /**
     * The lifetime of a task when the client asks for none, in milliseconds.
     * @default 3600000 (one hour)
     */
    defaultTtlMs?: number;
    /**
     * The longest lifetime a client may ask for; longer requests are cut to it.
     * @default 86400000 (one day)
     */
    maxTtlMs?: number;
    /**
     * The polling interval suggested to clients, in milliseconds.
     * @default 1000
     */
    pollIntervalMs?: number;
    /**
     * How long `tasks/result` waits for a task that is not over before it answers an error asking
     * the client to call again, in milliseconds.
     * @default 60000
     */
    resultTimeoutMs?: number;
    /**
     * How long a task's handler waits for the answer to one `ctx.elicit`, `sample` or `listRoots`
     * (the task is `input_required` meanwhile) before it rejects with `McpClientRequestTimeoutError`,
     * in milliseconds.
     * @default (`streams.clientRequestTimeoutMs`, 300_000)
     */
    inputTimeoutMs?: number;
    /**
     * How long a worker's hold on a queued task lasts without renewal (Bull's `lockDuration`): a
     * worker silent for longer is taken for dead and its task is found interrupted.
     * @default 30000
     */
    lockDurationMs?: number;
    /**
     * The name of the Bull queue (one per mount).
     * @default ('mcp-tasks-<mount>')
     */
    queueName?: string;
  }
  /**
   * The mount's budget of `tools/call`s per principal (`rateLimit`): at most `limit` calls in a
   * window of `windowMs`, opened by the principal's first counted call.
   */
  export interface RateLimit {
    /** Calls one principal may make in one window, all tools together. */
    limit: number;
    /** Length of the window, in milliseconds. */
    windowMs: number;
  }
  /** Settings of stateless (2026-07-28) requests. */
  export interface Stateless {
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
  /**
   * Makes a mount an OAuth 2.1 resource server: it publishes its Protected Resource Metadata
   * (RFC 9728) and its 401 and 403 answers name that document and the scopes it needs, so an MCP
   * client can discover the authorization server and come back with a token for this mount.
   */
  export interface OAuth {
    /**
     * The canonical URI of this mount as clients reach it (RFC 8707), e.g.
     * `https://mcp.example.com/mcp`: tokens must name it as their audience. Give either
     * `resource` or `publicUrl`.
     * @default (`publicUrl` followed by the mount's path)
     */
    resource?: string;
    /**
     * The public base URL of the app (scheme, host, port and any prefix a proxy adds), e.g.
     * `https://mcp.example.com`; the resource is this URL followed by the mount's path.
     */
    publicUrl?: string;
    /**
     * Issuer identifiers of the authorization servers that issue tokens for this mount (at least one).
     * @default (the issuer of the app's `McpAuthorizationServerModule`; required without it)
     */
    authorizationServers?: string[];
    /**
     * The scopes clients may ask for, published as `scopes_supported`.
     * @default (`requiredScopes`)
     */
    scopesSupported?: string[];
    /**
     * Scopes every token must carry to use this mount: a token without them gets 403
     * `insufficient_scope`, and a 401 names them in its `scope` parameter.
     * @default []
     */
    requiredScopes?: string[];
    /** A page where people can read how to use this resource, published as `resource_documentation`. */
    resourceDocumentation?: string;
    /** A human-readable name of the resource, published as `resource_name`. */
    resourceName?: string;
    /**
     * How long clients and proxies may cache the metadata document, in milliseconds
     * (`Cache-Control: max-age`, rounded up to whole seconds).
     * @default 3_600_000 (one hour)
     * @minimum 0
     */
    metadataMaxAgeMs?: number;
  }
  /**
   * Expert settings of a mount: bounds, caps, stream buffers and resumption, cache hints, Redis
   * names, audit commit mode, span payloads and the shutdown drain. Their defaults suit most
   * deployments; each is documented with its default.
   */
  export interface Advanced {
    /** Database bounds of the mount's TypeORM stores. */
    database?: Database;
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
     * Serve the mount's POSTs straight from Node's HTTP server, ahead of the app's router (Express
     * or Fastify), when nothing else of the app would see them on the Nest route: no middleware
     * that matches the mount's path (`app.use`, `enableCors()`, a `MiddlewareConsumer` route), no
     * global guard or interceptor, no route of the app ahead of the mount's; on Fastify also no
     * hook of the request lifecycle (a plugin's, the app's), no Fastify logger, `rewriteUrl`,
     * `handlerTimeout` or Nest versioning, and an `auth` authorizer that takes the token alone
     * (one that also takes the request gets Fastify's request on the Nest route). The answers are
     * the same on both paths; this one costs less server CPU per request. When something would
     * see the POSTs, they stay on the Nest route, and the boot log says what kept them there.
     * `false` keeps them there always.
     * @default true
     */
    fastPath?: boolean;
    /**
     * Page size of `tools/list`.
     * @default 100
     */
    pageSize?: number;
    /**
     * Names and bounds of the mount's Redis traffic (channel prefix, command timeout); the
     * connection itself is `redis`.
     */
    pubsub?: PubSub;
    /** SSE stream settings (client request timeout, keep-alive, reconnection delay). */
    streams?: Streams;
    /** Caps per principal and per session (sessions, streams, subscriptions). */
    limits?: Limits;
    /**
     * Caching hints (`ttlMs`, `cacheScope`) on the cacheable results of stateless requests. A
     * handler that sets its own hints on a result keeps them.
     */
    cache?: Cache;
    /**
     * Graceful shutdown: how long requests in flight may run once the app drains (SIGTERM with
     * `enableShutdownHooks()`), and the `Retry-After` of the 503 that refuses new ones meanwhile.
     * @default { drainTimeoutMs: 10_000, quietPeriodMs: 500, retryAfterMs: 1000 }
     */
    shutdown?: Shutdown;
  }
  /** How the mount's stores treat a slow or absent database. */
  export interface Database {
    /**
     * Bound of every database operation a request waits for (session lookup and writes, the
     * group-committed audit row, subscriptions): past it the request is answered 503 with
     * `Retry-After` instead of waiting for the database. Set the pg pool's own limits as well
     * (`connectionTimeoutMillis`, `statement_timeout`, see the README's "Failure behaviour").
     * @default 5000
     */
    timeoutMs?: number;
  }
  /** Names and bounds of a mount's Redis traffic; the connection is the mount's `redis` option. */
  export interface PubSub {
    /**
     * Prefix of the channel and key names, so several apps (or test suites) can share one Redis.
     * @default 'mcp'
     */
    channelPrefix?: string;
    /**
     * Bound of one Redis command of the bus (publish, stream claim), in milliseconds. While Redis is down commands
     * fail at once; a request that needs one is answered 503.
     * @default 5000
     */
    timeoutMs?: number;
  }
  /** Settings of the SSE streams of a mount (POST answers that stream, GET streams). */
  export interface Streams {
    /**
     * How long `ctx.elicit`, `ctx.sample` and `ctx.listRoots` wait for the client's answer before
     * rejecting with `McpClientRequestTimeoutError`.
     * @default 300_000 (five minutes: elicitation waits on a person)
     */
    clientRequestTimeoutMs?: number;
    /**
     * Interval of the keep-alive comments on an idle GET stream (also how often the replica
     * holding it renews its claim on the session's stream).
     * @default 15_000
     */
    keepAliveMs?: number;
    /**
     * Reconnection delay announced to clients in the `retry` field of every stream's first event.
     * @default 1_000
     */
    retryMs?: number;
    /**
     * Bytes a stream may have queued for a client that does not read (socket buffer full). A
     * message that finds more than this queued closes the stream instead of growing the queue.
     * @default 4_194_304 (4 MiB)
     */
    maxBufferedBytes?: number;
    /**
     * Events kept per stream for clients that reconnect with `Last-Event-ID` (in Redis when
     * the mount has `redis`, so any replica resumes; in process memory otherwise).
     * @default 500
     */
    resumeEvents?: number;
    /**
     * How long a stream's events stay resumable after its last event, in ms.
     * @default 600_000 (ten minutes)
     */
    resumeTtlMs?: number;
    /**
     * Resumed POST streams (a GET with `Last-Event-ID` naming a request's stream whose response is
     * not sent yet) this process follows at once, reading the event log for what the request sends
     * next. A resumption beyond it gets what is kept so far and ends: the client comes back after
     * `retryMs` with its new `Last-Event-ID`. Each open resumption also counts against
     * `limits.streamsPerPrincipal`.
     * @default 1_000
     */
    resumeFollowers?: number;
  }
  /**
   * Caps on what one principal (or one session) may hold on a mount, so a single caller cannot
   * exhaust the server's memory, connections or tables. An exceeded cap answers HTTP 429 with a
   * JSON-RPC error (`-32000`, `data: { limit, max }`), or a JSON-RPC error for
   * `resources/subscribe`; a `subscriptions/listen` filter list longer than its cap is refused
   * as invalid params (`-32602`, with the same `data`).
   */
  export interface Limits {
    /**
     * Live 2025 sessions per principal on the mount, counted in the database (so the cap holds
     * across replicas); `initialize` beyond it answers 429. Terminated and idle sessions do not count.
     * @default 100
     */
    sessionsPerPrincipal?: number;
    /**
     * Open GET streams (2025 sessions) per principal, counted per process: with N replicas a
     * principal may hold up to N times this many.
     * @default 100
     */
    streamsPerPrincipal?: number;
    /**
     * Open `subscriptions/listen` streams (2026-07-28) per principal, counted per process.
     * @default 100
     */
    listenStreamsPerPrincipal?: number;
    /**
     * Entries of `notifications.resourceSubscriptions` one `subscriptions/listen` request may name
     * (counted as sent, duplicates included), checked before any URI is looked at.
     * @default 1000
     */
    listenResourceSubscriptions?: number;
    /**
     * Entries of `notifications.taskIds` one `subscriptions/listen` request may name (counted as
     * sent), checked before any task is looked up in the database.
     * @default 1000
     */
    listenTaskIds?: number;
    /**
     * Resource URIs one session may watch (`resources/subscribe`), counted in the database.
     * @default 1000
     */
    subscriptionsPerSession?: number;
    /**
     * Tasks per principal that are not over yet (`working` or `input_required`, not expired),
     * counted in the database (so the cap holds across replicas); a task-augmented `tools/call`
     * beyond it answers 429 and creates nothing. All anonymous callers of an `anonymous: true`
     * mount share one count.
     * @default 100
     */
    tasksPerPrincipal?: number;
  }
  /** Caching hints of a mount: lists and discovery, and resource reads (often per user). */
  export interface Cache extends McpCacheHint {
    /** Hints of `resources/read` results. */
    read?: McpCacheHint;
  }
  /** How a mount ends when the app shuts down (SIGTERM with `app.enableShutdownHooks()`, or `app.close()`). */
  export interface Shutdown {
    /**
     * How long requests already in flight may run once the app started to shut down. New sessions
     * and new requests are refused with 503 and `Retry-After` from the first moment; past this
     * deadline the calls still running see their `AbortSignal` fire, and a call that does not end
     * soon after is answered with a JSON-RPC error. Every one of them keeps its audit row.
     * @default 10_000 (ten seconds)
     */
    drainTimeoutMs?: number;
    /**
     * The drain also waits, within `drainTimeoutMs`, until no request arrived or ended for this
     * long: a client that sent its next request right after an answer (or before its load balancer
     * saw readiness go down) gets the 503 rather than a connection reset when the server closes.
     * A drain that found nothing in flight and refused nothing closes at once. The same period
     * bounds the close of the HTTP server: after a drain that refused requests, the listener closes
     * once no connection arrived for this long (the last refusals wait for it), and a keep-alive
     * connection is closed once it stayed idle for this long. Keep it shorter than
     * `retryAfterMs`, so a client that honours `Retry-After` comes back after the close.
     * @default 500
     * @minimum 0
     */
    quietPeriodMs?: number;
    /**
     * The `Retry-After` of the 503 that refuses new requests while the app drains, in
     * milliseconds; the header carries it rounded up to whole seconds.
     * @default 1000
     */
    retryAfterMs?: number;
  }
}
