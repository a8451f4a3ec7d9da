import type { McpOAuthEncryptionKey } from '../../token-cipher';
import type { ConfigurableModuleAsyncOptions } from '@nestjs/common';
import type { AdvancedSettings } from 'bull';
import type { McpRedisConnection } from '../../redis-connection';
import type { McpAuditOptions } from '../../persistence/interfaces/mcp-audit-options.interface';
import type { McpTelemetryOptions } from '../../telemetry/mcp-telemetry.options';
import type { McpClientRetentionOptions } from '../../persistence/retention/mcp-retention.options';
import type { McpClientStores } from '../../persistence/store-providers';
import type { McpClientTransports } from '../transports/mcp-client-transports';
import type { McpClientHandlers } from './mcp-client-handlers.interface';
import type { McpServerConfig } from './mcp-server-config.interface';

/**
 * Options of `McpClientModule.forRoot` (or what the `forRootAsync` factory returns): the servers
 * this app calls and how calls run.
 */
export interface McpClientOptions {
  /** Servers by name. */
  servers?: Record<string, McpServerConfig>;
  /**
   * A Claude-Desktop style JSON file `{ "mcpServers": { "name": { "command", "args", "env", "cwd" } | { "url", "headers" } } }`,
   * merged with `servers`; a name declared twice is a boot error.
   */
  serversFile?: string;
  /**
   * The Redis of the client (a `redis://` URL, ioredis options, with `sentinels` and `name` for a
   * Sentinel group, or `{ cluster: { nodes, options } }` for a Cluster), shared by everything in it
   * that needs one: the call queue (calls become Bull jobs any worker runs), the retention
   * schedule, the OAuth token store of `clientCredentials` and the at-most-once markers of calls.
   * A host `BullModule.forRoot` is picked up when this is absent.
   * @default (none: calls run inline in this process and no Redis connection is opened)
   * @validate redis
   */
  redis?: McpRedisConnection;
  /** Queue settings (name, concurrency, retries, Bull settings); the connection is `redis`. */
  queue?: McpClientOptions.Queue;
  /** Handlers of server->client requests (also `@McpSamplingHandler()` & co. on providers). */
  handlers?: McpClientHandlers;
  /** Deadline of a call when neither the call nor its server sets one, in ms. @default 60_000 */
  defaultTimeoutMs?: number;
  /**
   * How long `callTool` (and the other waiting calls) and `waitForCall` wait for a queued call's
   * outcome before rejecting with `McpCallWaitTimeoutError` (no worker took the job, or its
   * completion event was lost). The call itself may still run.
   * @default 600_000 (10 minutes)
   */
  waitTimeoutMs?: number;
  /**
   * Retention of the client's rows (durations in milliseconds; off by default): outbound
   * `mcp_events` rows and outbound sessions unused for longer. Runs once per `intervalMs` on one
   * worker (a Bull repeatable job on the queue's Redis, else a timer and a PostgreSQL advisory
   * lock), in bounded batches.
   * @validate retention
   */
  retention?: McpClientRetentionOptions;
  /**
   * User-delegated OAuth, for servers whose `auth` is `authorizationCode({...})`: the callback
   * URL the authorization server sends the user back to, and the keys that seal user tokens in
   * the database. Required as soon as one server uses `authorizationCode`.
   * @default (none: a server using authorizationCode() refuses to boot)
   */
  oauth?: McpClientOptions.OAuth;
  /** Expert settings: `input_required` rounds, the audit commit mode and span payloads. */
  advanced?: McpClientOptions.Advanced;
}

/** Synchronous options of `McpClientModule` that shape the module graph (also with `forRootAsync`). */
export interface McpClientModuleExtras {
  /**
   * Make `McpClientService` injectable in every module of the app. Off by default, as on
   * `McpModule`: `McpClientService` is then injected by the providers of the module that imports
   * `McpClientModule.forRoot` (and of modules it re-exports it to); set `isGlobal: true` once to
   * inject it everywhere.
   * @default false
   */
  isGlobal?: boolean;
  /**
   * Transports of the app's own, beside the built-in `stdio`, `http` and `toolset`, built with
   * `mcpTransports(...)` of `durable-mcp/transports` from factory classes (providers of the
   * module, so they may inject what they need) or instances. Servers name them with
   * `transport: '<name>'`.
   * @default (the built-in transports only)
   */
  transports?: McpClientTransports;
  /**
   * Stores to use instead of the TypeORM ones (outbound sessions, events), each a class or an
   * instance. With both swapped the client needs no TypeORM connection, e.g. with the in-memory
   * stores of `durable-mcp/testing` in a host's tests.
   * @default (every store on TypeORM)
   */
  stores?: McpClientStores;
  /**
   * Mounts the callback route of user-delegated OAuth (`authorizationCode`) at this path, e.g.
   * `'/mcp-oauth/callback'`: it completes the authorization the user was sent to with
   * `McpOAuthService.authorizationUrl`. `oauth.redirectUri` must point at it.
   * @default (none: no route; the host completes authorizations with `McpOAuthService.completeAuthorization`)
   */
  oauthCallbackPath?: string;
  /**
   * Serves the app's Client ID Metadata Document (for `authorizationCode({ clientMetadataUrl })`)
   * at this path, e.g. `'/oauth/client-metadata.json'`: `client_id` is the `clientMetadataUrl`
   * of the servers (one URL for all of them), with `oauth.redirectUri` and `oauth.clientName`.
   * `clientMetadataUrl` must be this path as the authorization server reaches it.
   * @default (none: no route; the host serves the document itself)
   */
  oauthClientMetadataPath?: string;
}

/** What `McpClientModule.forRoot` takes: the client options and the synchronous extras. */
export type McpClientModuleOptions = McpClientOptions & McpClientModuleExtras;

/**
 * What `McpClientModule.forRootAsync` takes: `useFactory` (with `imports` and `inject`),
 * `useClass` or `useExisting` producing `McpClientOptions`, plus the synchronous extras.
 */
export type McpClientModuleAsyncOptions = ConfigurableModuleAsyncOptions<McpClientOptions, 'createMcpClientOptions'> &
  McpClientModuleExtras;

/**
 * The option groups of `McpClientOptions`: `McpClientOptions.Queue` is the type of `queue`,
 * `McpClientOptions.Advanced` that of `advanced`.
 */
export declare namespace McpClientOptions {
  /** How client calls run: on a Bull queue when the client has Redis (`redis`), else inline in this process. */
  export interface Queue {
    /**
     * Queue name.
     * @default 'mcp-calls'
     * @minLength 1
     */
    name?: string;
    /**
     * Redis key prefix of the queue.
     * @default (Bull's, `'bull'`)
     */
    prefix?: string;
    /** Jobs this process runs at once. @default 8 */
    concurrency?: number;
    /** This process runs jobs (a worker); false makes it enqueue only. @default true */
    worker?: boolean;
    /** Attempts of a retryable call (listing/reading, or undelivered). @default 3 */
    attempts?: number;
    /**
     * First retry delay, doubled for each further attempt, in ms.
     * @default 500
     * @minimum 0
     */
    backoffMs?: number;
    /** Bull advanced settings (lockDuration, stalledInterval, maxStalledCount...). */
    settings?: AdvancedSettings;
    /** How long finished jobs (and inline outcomes) are kept for `getCallResult`, in ms. @default 86_400_000 */
    keepResultsMs?: number;
    /**
     * Bound of one Redis command of the queue (enqueue, state, the at-most-once mark), in ms.
     * While the connection is down commands fail at once with `McpQueueUnavailableError`.
     * @default 5000
     */
    commandTimeoutMs?: number;
    /**
     * Replicas that must hold a `tools/call`'s at-most-once mark before the call is sent, so that a
     * failover to a replica cannot lose the mark and send the call a second time. The worker
     * writes the mark on the master, then waits for replicas to acknowledge it (Redis `WAIT`,
     * bounded by `commandTimeoutMs`). A number is strict: when fewer acknowledge in time, the mark
     * is deleted and the call is not sent (`McpQueueUnavailableError`, `delivered: false`), also
     * while the master has fewer replicas, as after a failover to the only one. `0` waits for none.
     * Unset on a Sentinel group or a Cluster ("auto"): the worker asks the master (`ROLE`) for its
     * connected replicas; with one or more it waits for one, strictly as above; with none it sends
     * the call unacknowledged and logs a warning (at most once a minute), so calls go on after a
     * failover. Left open there: a replica disconnected when the mark is written, promoted later.
     * @default (auto on a Sentinel group or a Cluster, else 0)
     * @minimum 0
     */
    markReplicas?: number;
  }
  /** User-delegated OAuth (`authorizationCode`) of the client. */
  export interface OAuth {
    /**
     * The absolute URL of the callback route as the user's browser reaches it (the app's public
     * origin and `oauthCallbackPath`), sent as `redirect_uri`; register it at the authorization
     * server. Required with `authorizationCode`.
     * @default (none)
     */
    redirectUri?: string;
    /**
     * Keys sealing access and refresh tokens and PKCE verifiers in the database (AES-256-GCM): the
     * first seals, every one opens. To rotate, put a new key first and keep the old ones until the
     * grants sealed with them were refreshed. Required with `authorizationCode`.
     * @default (none)
     */
    encryptionKeys?: McpOAuthEncryptionKey[];
    /** How long a started authorization may be completed, in ms. @default 600_000 (10 minutes) */
    authorizationTtlMs?: number;
    /**
     * The name the authorization server shows users for the app (on its consent page): the
     * `client_name` of a dynamic registration and of the Client ID Metadata Document.
     * @default 'MCP client'
     * @minLength 1
     */
    clientName?: string;
  }
  /** Expert settings of the client; their defaults suit most apps. */
  export interface Advanced {
    /**
     * Most `input_required` answers a 2026-07-28 server may give one call (each is fulfilled with
     * the handlers, then the request is sent again) before the call fails with `McpInputRequiredError`.
     * @default 8
     */
    maxInputRounds?: number;
    /**
     * How the client's outbound audit rows are committed: `{ commit: 'async' }` turns PostgreSQL's
     * `synchronous_commit` off for their transactions (see `McpAuditOptions` for what a database
     * crash may then lose).
     */
    audit?: McpAuditOptions;
    /**
     * What the client's OpenTelemetry spans record beyond the default attributes
     * (`{ recordPayloads: true }` adds arguments and results). Spans exist only when the host
     * registers an OpenTelemetry SDK.
     */
    telemetry?: McpTelemetryOptions;
  }
}
