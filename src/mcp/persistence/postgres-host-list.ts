import { Logger } from '@nestjs/common';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { requireOptionalPeer } from '../optional-peer';

/** One PostgreSQL server of a host list. */
interface PostgresTarget {
  host: string;
  port: number;
  /** `host:port`, for messages (never with credentials). */
  label: string;
}

/** What a host list accepts as a server: libpq's `target_session_attrs`, the two values that matter here. */
export type McpPostgresTargetSessionAttrs = 'read-write' | 'any';

/**
 * The TypeORM connection options `mcpPostgresHostList` returns: spread them into
 * `TypeOrmModule.forRoot({ type: 'postgres', ...mcpPostgresHostList(url), entities })`. There is no
 * `url`: node-postgres cannot parse a URL with several hosts, so the parts are given one by one.
 */
export interface McpPostgresHostListConnection {
  /** The first host of the list (the pool's clients pick the server themselves). */
  host: string;
  /** The first host's port. */
  port: number;
  username?: string;
  password?: string;
  database?: string;
  /**
   * The pool's options: `Client`, a node-postgres client class that connects to the first server of
   * the list that accepts the session, and the URL's other query parameters.
   */
  extra: Record<string, unknown> & { Client: unknown };
}

/** The part of node-postgres' `Client` this module uses. */
interface PgClient {
  host: string;
  port: number;
  connectionParameters: { host: string; port: number };
  connect(): Promise<void>;
  query(text: string): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
  on(event: 'error' | 'end', listener: (...args: unknown[]) => void): void;
}

type PgClientClass = new (config: Record<string, unknown>) => PgClient;

/** SQLSTATE 25006, `read_only_sql_transaction`: what PostgreSQL answers a write on a standby. */
export const READ_ONLY_SQLSTATE = '25006';
/** SQLSTATE 08001, `sqlclient_unable_to_establish_sqlconnection`. */
const NO_CONNECTION_SQLSTATE = '08001';

/** A connection refused because no server of the list accepts writes; its `code` is a SQLSTATE, so it answers 503. */
class PostgresTargetError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'McpPostgresTargetError';
  }
}

/** Splits `host[:port]` (an IPv6 address in brackets) into its parts. */
function parseTarget(text: string, defaultPort: number): PostgresTarget {
  const match = /^(\[[^\]]+\]|[^:]*)(?::(\d*))?$/.exec(text);
  const host = decodeURIComponent((match?.[1] ?? '').replace(/^\[(.*)\]$/, '$1'));
  if (!match || !host) throw new McpConfigurationError(`mcpPostgresHostList: "${text}" is not a host[:port]`);
  const port = match[2] ? Number(match[2]) : defaultPort;
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw new McpConfigurationError(`mcpPostgresHostList: "${text}" has no valid port`);
  return { host, port, label: `${host}:${port}` };
}

/**
 * Connection options for PostgreSQL behind a primary and its standbys, like libpq's host lists:
 * `postgres://user:password@db1:5432,db2:5432/app?target_session_attrs=read-write`.
 *
 * node-postgres takes one host. The pool's clients that these options make try the hosts in
 * order and keep the first one that accepts the session: with `read-write` (the default here,
 * since the module writes on every request) one whose `transaction_read_only` is `off`, so a
 * standby is skipped until it is promoted. The server chosen is remembered; a connection to it
 * that breaks or turns read-only makes the next connection look again. While no server of the
 * list accepts writes (between the primary's loss and a standby's promotion) a connection fails
 * with a SQLSTATE error (`25006` when a host answered read-only, `08001` when none answered),
 * which the endpoint answers with 503 and a JSON-RPC body; the log says why once per change, not
 * per request. Credentials never appear in a message.
 *
 * `target_session_attrs=any` takes the first host that accepts a connection. Other query
 * parameters of the URL are passed to the pool as they are (e.g. `application_name`).
 *
 * @param url a `postgres://` or `postgresql://` URL with one or more comma-separated `host[:port]`
 * @returns TypeORM options to spread next to `type: 'postgres'`
 * @throws McpConfigurationError when the URL is not a PostgreSQL URL, a host or port is invalid,
 * or `target_session_attrs` is another value
 */
export function mcpPostgresHostList(url: string): McpPostgresHostListConnection {
  const match = /^postgres(?:ql)?:\/\/(?:([^@/]*)@)?([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/.exec(url);
  if (!match)
    throw new McpConfigurationError(
      'mcpPostgresHostList: the URL must be postgres://[user[:password]@]host[:port][,host[:port]...]/database',
    );
  const [, userInfo, hostList, database, query] = match;
  const params = new URLSearchParams(query ?? '');
  const attrs = params.get('target_session_attrs') ?? 'read-write';
  params.delete('target_session_attrs');
  if (attrs !== 'read-write' && attrs !== 'any')
    throw new McpConfigurationError(
      `mcpPostgresHostList: target_session_attrs must be read-write or any, not "${attrs}"`,
    );
  const targets = hostList.split(',').map((text) => parseTarget(text, 5432));
  const [username, password] = (userInfo ?? '')
    .split(/:(.*)/s)
    .map((part) => (part ? decodeURIComponent(part) : undefined));
  const extra: Record<string, unknown> = {};
  for (const [key, value] of params) extra[key] = value;
  return {
    host: targets[0].host,
    port: targets[0].port,
    ...(username !== undefined && { username }),
    ...(password !== undefined && { password }),
    ...(database && { database: decodeURIComponent(database) }),
    extra: { ...extra, Client: hostListClient(targets, attrs) },
  };
}

/** Builds the client class of one host list: every client of the pool shares which server was chosen. */
function hostListClient(targets: PostgresTarget[], attrs: McpPostgresTargetSessionAttrs): PgClientClass {
  const pg = requireOptionalPeer<{ Client: PgClientClass }>('pg', 'mcpPostgresHostList');
  const logger = new Logger('McpPostgresHostList');
  let current: PostgresTarget | undefined;
  let picking: Promise<PostgresTarget> | undefined;
  /** The last thing logged, so that a state is said once, not once per connection. */
  let lastLogged: string | undefined;
  const say = (line: string, level: 'warn' | 'log') => {
    if (line === lastLogged) return;
    lastLogged = line;
    logger[level](line);
  };

  /** Whether a connected client's session is read-only (`SHOW transaction_read_only`, what libpq asks). */
  const readOnly = async (client: PgClient): Promise<boolean> => {
    if (attrs === 'any') return false;
    const { rows } = await client.query('SHOW transaction_read_only');
    return rows[0]?.transaction_read_only === 'on';
  };

  const refusal = (reasons: string[], anyReadOnly: boolean) => {
    const message =
      targets.length === 1
        ? `The database at ${reasons[0]}`
        : `No database of ${targets.map((t) => t.label).join(', ')} accepts writes: ${reasons.join('; ')}`;
    return new PostgresTargetError(message, anyReadOnly ? READ_ONLY_SQLSTATE : NO_CONNECTION_SQLSTATE);
  };

  /** Tries each host with a short-lived client of its own and remembers the first that fits. */
  const probe = async (config: Record<string, unknown>): Promise<PostgresTarget> => {
    const reasons: string[] = [];
    let anyReadOnly = false;
    for (const target of targets) {
      const client = new pg.Client({ ...config, Client: undefined, host: target.host, port: target.port });
      client.on('error', () => undefined);
      try {
        await client.connect();
        if (!(await readOnly(client))) {
          current = target;
          say(`Writes go to the database at ${target.label}`, 'log');
          return target;
        }
        anyReadOnly = true;
        reasons.push(`${target.label} is read-only (a standby?)`);
      } catch (error) {
        const { code, message } = error as { code?: unknown; message?: unknown };
        reasons.push(`${target.label} is unreachable (${typeof code === 'string' ? code : String(message)})`);
      } finally {
        await client.end().catch(() => undefined);
      }
    }
    const error = refusal(reasons, anyReadOnly);
    say(error.message, 'warn');
    throw error;
  };

  const pick = (config: Record<string, unknown>): Promise<PostgresTarget> => {
    if (current) return Promise.resolve(current);
    picking ??= probe(config).finally(() => (picking = undefined));
    return picking;
  };

  /** A node-postgres client that connects to the server of the list that accepts the session. */
  return class McpPostgresHostListClient extends pg.Client {
    private readonly config: Record<string, unknown>;
    private target: PostgresTarget | undefined;

    constructor(config: Record<string, unknown>) {
      super(config);
      this.config = config;
      const forget = () => {
        if (this.target && current === this.target) current = undefined;
      };
      this.on('error', forget);
      this.on('end', () => {
        if (!(this as unknown as { _ending?: boolean })._ending) forget();
      });
    }

    /** Connects to the chosen server; the pool calls it with a callback, others await it. */
    override connect(callback?: (error?: Error, client?: unknown) => void): Promise<void> {
      const done = this.connectToTarget();
      if (!callback) return done;
      done.then(
        () => callback(undefined, this),
        (error: Error) => callback(error),
      );
      return undefined as unknown as Promise<void>;
    }

    private async connectToTarget(): Promise<void> {
      const target = await pick(this.config);
      this.target = target;
      this.host = this.connectionParameters.host = target.host;
      this.port = this.connectionParameters.port = target.port;
      try {
        await super.connect();
      } catch (error) {
        if (current === target) current = undefined;
        throw error;
      }
      if (await readOnly(this)) {
        if (current === target) current = undefined;
        const error = refusal([`${target.label} is read-only (a standby?)`], true);
        say(error.message, 'warn');
        await this.end().catch(() => undefined);
        throw error;
      }
    }
  };
}
