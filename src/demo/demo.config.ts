import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

/** Settings of the example app, read once from the environment (see the example app configuration in docs/guide/getting-started.md). */
export interface DemoConfig {
  host: string;
  port: number;
  databaseUrl?: string;
  /** SQLITE_FILE: the SQLite file used when DATABASE_URL is unset. @default './data/durable-mcp.sqlite' */
  sqliteFile: string;
  /**
   * Set by `--stdio` or MCP_TRANSPORT=stdio: the app serves its mount over stdin/stdout instead of
   * HTTP, as a local server of a desktop client, for the principal MCP_STDIO_PRINCIPAL.
   */
  stdio?: DemoStdioConfig;
  /** Redis for the client's durable calls; unset runs them inline. */
  redisUrl?: string;
  /** REDIS_PREFIX: the Redis key prefix of the client's call queue; unset keeps Bull's `bull`. */
  redisPrefix?: string;
  /** How audit rows commit (`AUDIT_COMMIT=async` turns PostgreSQL's synchronous_commit off for them). */
  auditCommit: 'sync' | 'async';
  /** token -> principal key */
  tokens: Map<string, string>;
  /**
   * MCP_CONSOLE_ADMINS: the principals (of MCP_TOKENS, or `demo` for the generated token) the
   * console admits; they see every row, and readiness details. Empty: the console admits nobody.
   */
  consoleAdmins: Set<string>;
  /** Set when MCP_TOKENS was empty and a token was generated for this run (never with OAuth, never with NODE_ENV=production). */
  generatedToken?: string;
  /** Set by OAUTH_ISSUER: the endpoint takes JWT access tokens from that issuer instead of MCP_TOKENS. */
  oauth?: DemoOAuthConfig;
  /**
   * Set by AUTH_SERVER_PUBLIC_URL: the app is the authorization server of its endpoint
   * (`McpAuthorizationServerModule`), its users signing in at AUTH_SERVER_UPSTREAM_ISSUER (or GitHub).
   */
  authServer?: DemoAuthServerConfig;
  /** The budget of the throttled tool (`add`), per principal. */
  throttle: DemoThrottleConfig;
  /** MCP_SERVERS_FILE: a Claude-Desktop style `mcpServers` file of more servers for the client. */
  serversFile?: string;
  /** RELAY_SERVER: the server whose `echo` tool `relay_echo` calls. @default 'self' (this app's own toolset) */
  relayServer: string;
  /** DRAIN_TIMEOUT_MS: how long calls in flight may finish at shutdown (`shutdown.drainTimeoutMs`). @default 10000 */
  drainTimeoutMs: number;
  /** The mount's `retention` option, when RETENTION_EVENTS_MS or RETENTION_SESSIONS_MS is set. */
  retention?: DemoRetentionConfig;
}

/** RETENTION_*: what the example app's mount prunes (milliseconds), how often and in what batches. */
export interface DemoRetentionConfig {
  /** RETENTION_EVENTS_MS: audit rows older than this go. */
  events?: number;
  /** RETENTION_SESSIONS_MS: sessions ended or idle longer ago than this go. */
  sessions?: number;
  /** RETENTION_INTERVAL_MS: period of the pruner. */
  intervalMs?: number;
  /** RETENTION_BATCH_SIZE: rows per delete. */
  batchSize?: number;
}

/** Reads RETENTION_*: undefined unless RETENTION_EVENTS_MS or RETENTION_SESSIONS_MS is set. */
export function parseRetention(env: NodeJS.ProcessEnv): DemoRetentionConfig | undefined {
  const read = (name: string) => (env[name]?.trim() ? parsePositiveInteger(name, env[name], 1) : undefined);
  const events = read('RETENTION_EVENTS_MS');
  const sessions = read('RETENTION_SESSIONS_MS');
  if (events === undefined && sessions === undefined) return undefined;
  const optional = { intervalMs: read('RETENTION_INTERVAL_MS'), batchSize: read('RETENTION_BATCH_SIZE') };
  return Object.fromEntries(
    Object.entries({ events, sessions, ...optional }).filter(([, value]) => value !== undefined),
  );
}

/** How the example app serves over stdio. */
export interface DemoStdioConfig {
  /** MCP_STDIO_PRINCIPAL: the principal key the connection's session and audit rows are bound to. @default 'local' */
  principal: string;
}

/** Reads `--stdio` and MCP_TRANSPORT (`http`, the default, or `stdio`); anything else stops the boot. */
export function parseStdio(env: NodeJS.ProcessEnv, argv: readonly string[]): DemoStdioConfig | undefined {
  const transport = (env.MCP_TRANSPORT || 'http').trim().toLowerCase();
  if (transport !== 'http' && transport !== 'stdio')
    throw new Error(`MCP_TRANSPORT="${env.MCP_TRANSPORT}" is not supported: use http (the default) or stdio`);
  if (transport !== 'stdio' && !argv.includes('--stdio')) return undefined;
  return { principal: env.MCP_STDIO_PRINCIPAL?.trim() || 'local' };
}

/** How often one principal may call the throttled tool. */
export interface DemoThrottleConfig {
  /** THROTTLE_LIMIT: calls allowed per window. @default 10 */
  limit: number;
  /** THROTTLE_TTL_MS: the window, in milliseconds. @default 60000 */
  ttlMs: number;
}

/** Default of THROTTLE_LIMIT. */
export const DEFAULT_THROTTLE_LIMIT = 10;

/** Default of THROTTLE_TTL_MS. */
export const DEFAULT_THROTTLE_TTL_MS = 60_000;

/** OAuth settings of the example app. */
export interface DemoOAuthConfig {
  /** OAUTH_ISSUER: the authorization server whose JWTs are accepted. */
  issuer: string;
  /** OAUTH_AUDIENCE: the resource URI tokens must name; defaults to http://HOST:PORT/mcp. */
  audience: string;
  /** OAUTH_SCOPES: scopes every token must carry (space or comma separated). */
  requiredScopes: string[];
}

/** AUTH_SERVER_*: the app as its own authorization server, in front of an upstream identity provider. */
export interface DemoAuthServerConfig {
  /** AUTH_SERVER_PUBLIC_URL: the app's public base URL (the issuer is it followed by /oauth). */
  publicUrl: string;
  /**
   * AUTH_SERVER_UPSTREAM_ISSUER (an OpenID Connect issuer), or AUTH_SERVER_UPSTREAM=github; with
   * AUTH_SERVER_CLIENT_ID and AUTH_SERVER_CLIENT_SECRET, the app's client at that provider.
   */
  upstream:
    | { kind: 'oidc'; issuer: string; clientId: string; clientSecret: string }
    | { kind: 'github'; clientId: string; clientSecret: string };
  /** AUTH_SERVER_SCOPES: the scopes granted (and required by the endpoint). @default ['mcp:tools'] */
  scopes: string[];
  /**
   * AUTH_SERVER_ALLOW_LOOPBACK_HTTP=1: the Client ID Metadata Document of an `https://127.0.0.1`
   * client id is fetched over plain http (a local try of a client, such as MCP Inspector, with a
   * document on the same machine); development only. @default false
   */
  allowLoopbackHttp: boolean;
  /**
   * AUTH_SERVER_ENCRYPTION_KEYS: the keys that seal the signing and cookie keys in the database,
   * comma-separated `id:key` (the first seals; an old one stays after a new one while rotating),
   * or one bare key (id `default`). Each key is 32 bytes, `openssl rand -base64 32`.
   */
  encryptionKeys: { id: string; key: string }[];
}

/** Parses AUTH_SERVER_ENCRYPTION_KEYS: `id:key,id:key`, or one bare key (id `default`). */
function parseEncryptionKeys(spec: string | undefined): { id: string; key: string }[] {
  const entries = (spec ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0)
    throw new Error(
      'AUTH_SERVER_PUBLIC_URL needs AUTH_SERVER_ENCRYPTION_KEYS: the key that seals the signing keys in the database (`openssl rand -base64 32`, the same on every replica)',
    );
  return entries.map((entry) => {
    const at = entry.indexOf(':');
    return at < 0 ? { id: 'default', key: entry } : { id: entry.slice(0, at), key: entry.slice(at + 1) };
  });
}

/** Reads AUTH_SERVER_*: undefined unless AUTH_SERVER_PUBLIC_URL is set. */
export function parseAuthServer(env: NodeJS.ProcessEnv): DemoAuthServerConfig | undefined {
  const publicUrl = env.AUTH_SERVER_PUBLIC_URL?.trim();
  if (!publicUrl) return undefined;
  if (env.OAUTH_ISSUER?.trim())
    throw new Error(
      'AUTH_SERVER_PUBLIC_URL and OAUTH_ISSUER are exclusive: the app is its own authorization server, or trusts another',
    );
  const clientId = env.AUTH_SERVER_CLIENT_ID?.trim();
  const clientSecret = env.AUTH_SERVER_CLIENT_SECRET?.trim();
  if (!clientId || !clientSecret)
    throw new Error(
      "AUTH_SERVER_PUBLIC_URL needs AUTH_SERVER_CLIENT_ID and AUTH_SERVER_CLIENT_SECRET: the app's client at the upstream identity provider",
    );
  const github = env.AUTH_SERVER_UPSTREAM?.trim() === 'github';
  const issuer = env.AUTH_SERVER_UPSTREAM_ISSUER?.trim();
  if (!github && !issuer)
    throw new Error(
      'AUTH_SERVER_PUBLIC_URL needs AUTH_SERVER_UPSTREAM_ISSUER (an OpenID Connect issuer, e.g. a Keycloak realm) or AUTH_SERVER_UPSTREAM=github',
    );
  const scopes = (env.AUTH_SERVER_SCOPES ?? 'mcp:tools').split(/[\s,]+/).filter(Boolean);
  const encryptionKeys = parseEncryptionKeys(env.AUTH_SERVER_ENCRYPTION_KEYS);
  return {
    publicUrl,
    upstream: github
      ? { kind: 'github', clientId, clientSecret }
      : { kind: 'oidc', issuer: issuer!, clientId, clientSecret },
    scopes,
    allowLoopbackHttp: parseAllowLoopbackHttp(env.AUTH_SERVER_ALLOW_LOOPBACK_HTTP),
    encryptionKeys,
  };
}

/** Reads AUTH_SERVER_ALLOW_LOOPBACK_HTTP: `1` or `true` turns it on; any other value is refused rather than read as off. */
function parseAllowLoopbackHttp(value: string | undefined): boolean {
  const flag = value?.trim().toLowerCase();
  if (!flag || flag === '0' || flag === 'false') return false;
  if (flag === '1' || flag === 'true') return true;
  throw new Error(`AUTH_SERVER_ALLOW_LOOPBACK_HTTP="${value}" is not 1, true, 0 or false`);
}

/** Parses `alice=token-a,bob=token-b` into token -> principal. */
export function parseTokens(spec: string): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const pair of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at <= 0 || at === pair.length - 1) {
      throw new Error(`MCP_TOKENS: "${pair}" is not principal=token (example: MCP_TOKENS=alice=token-a,bob=token-b)`);
    }
    tokens.set(pair.slice(at + 1), pair.slice(0, at));
  }
  return tokens;
}

/**
 * Reads MCP_CONSOLE_ADMINS (`alice,ops`): principal names, each one a principal of `tokens` when
 * there are tokens, so a misspelt name stops the boot instead of locking everyone out.
 */
export function parseConsoleAdmins(spec: string | undefined, tokens: Map<string, string>): Set<string> {
  const admins = new Set(
    (spec ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  );
  const principals = new Set(tokens.values());
  const unknown = principals.size ? [...admins].filter((name) => !principals.has(name)) : [];
  if (unknown.length) {
    throw new Error(
      `MCP_CONSOLE_ADMINS: ${unknown.map((name) => `"${name}"`).join(', ')} ${unknown.length === 1 ? 'is not a principal' : 'are not principals'} of MCP_TOKENS ` +
        `(known: ${[...principals].sort().join(', ')}; example: MCP_CONSOLE_ADMINS=${[...principals][0]})`,
    );
  }
  return admins;
}

/** Reads `AUDIT_COMMIT`: `sync` (the default) or `async`. */
export function parseAuditCommit(value: string | undefined): 'sync' | 'async' {
  const commit = value?.trim() || 'sync';
  if (commit !== 'sync' && commit !== 'async')
    throw new Error(`AUDIT_COMMIT: "${commit}" is neither sync nor async (example: AUDIT_COMMIT=async)`);
  return commit;
}

/** Reads a positive integer setting such as THROTTLE_LIMIT; unset or empty gives `fallback`. */
export function parsePositiveInteger(name: string, value: string | undefined, fallback: number): number {
  const text = value?.trim();
  if (!text) return fallback;
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(Number(text)))
    throw new Error(`${name}: "${text}" is not a positive integer (example: ${name}=${fallback})`);
  return Number(text);
}

/** Reads the example app's configuration from an environment. */
export function loadDemoConfig(
  env: NodeJS.ProcessEnv = process.env,
  argv: readonly string[] = process.argv,
): DemoConfig {
  const spec = env.MCP_TOKENS?.trim();
  const stdio = parseStdio(env, argv);
  const host = env.HOST || '127.0.0.1';
  const port = Number(env.PORT || 3000);
  const issuer = env.OAUTH_ISSUER?.trim();
  const oauth = issuer
    ? {
        issuer,
        audience: env.OAUTH_AUDIENCE?.trim() || `http://${host}:${port}/mcp`,
        requiredScopes: (env.OAUTH_SCOPES ?? '').split(/[\s,]+/).filter(Boolean),
      }
    : undefined;
  const authServer = parseAuthServer(env);
  if (!spec && !oauth && !authServer && !stdio && env.NODE_ENV === 'production') {
    // The image sets NODE_ENV=production: a server there never runs on a token it made up.
    throw new Error(
      'Neither MCP_TOKENS nor OAUTH_ISSUER is set: give MCP_TOKENS=principal=token (comma separated pairs), or OAUTH_ISSUER to accept JWT access tokens (with NODE_ENV=production no demo token is generated)',
    );
  }
  // Over stdio nobody presents a token: none is generated.
  const generatedToken = spec || oauth || authServer || stdio ? undefined : randomBytes(24).toString('base64url');
  const tokens = spec
    ? parseTokens(spec)
    : generatedToken
      ? new Map([[generatedToken, 'demo']])
      : new Map<string, string>();
  return {
    host,
    port,
    databaseUrl: env.DATABASE_URL || undefined,
    sqliteFile: env.SQLITE_FILE?.trim() || join('data', 'durable-mcp.sqlite'),
    ...(stdio ? { stdio } : {}),
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.REDIS_PREFIX?.trim() || undefined,
    auditCommit: parseAuditCommit(env.AUDIT_COMMIT),
    tokens,
    consoleAdmins: parseConsoleAdmins(env.MCP_CONSOLE_ADMINS, tokens),
    generatedToken,
    oauth,
    ...(authServer ? { authServer } : {}),
    throttle: {
      limit: parsePositiveInteger('THROTTLE_LIMIT', env.THROTTLE_LIMIT, DEFAULT_THROTTLE_LIMIT),
      ttlMs: parsePositiveInteger('THROTTLE_TTL_MS', env.THROTTLE_TTL_MS, DEFAULT_THROTTLE_TTL_MS),
    },
    serversFile: env.MCP_SERVERS_FILE?.trim() || undefined,
    relayServer: env.RELAY_SERVER?.trim() || 'self',
    drainTimeoutMs: parsePositiveInteger('DRAIN_TIMEOUT_MS', env.DRAIN_TIMEOUT_MS, 10_000),
    retention: parseRetention(env),
  };
}

/** The configuration of this process. */
export const demoConfig = loadDemoConfig();
