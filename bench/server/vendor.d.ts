/**
 * The few parts of untyped dependencies the benchmark uses (neither `autocannon` nor `pg` ships
 * its own declarations, and the bench must not add `@types/*` packages).
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  /** One request template; `setupRequest` and `onResponse` run on every request of a connection. */
  interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
    onResponse?: (
      status: number,
      body: string,
      context: Record<string, unknown>,
      headers: Record<string, string>,
    ) => void;
  }

  interface AutocannonOptions {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    timeout?: number;
    headers?: Record<string, string>;
    requests?: AutocannonRequest[];
  }

  interface AutocannonResult {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    mismatches: number;
    resets: number;
    requests: { total: number; sent: number; average: number };
    latency: { p50: number; p99: number };
    statusCodeStats: Record<string, { count: number }>;
  }

  /** The running instance: emits `response(client, status, bytes, ms)` and `done(result)`. */
  interface AutocannonInstance extends EventEmitter {
    stop(): void;
  }

  function autocannon(
    options: AutocannonOptions,
    done: (error: Error | null, result: AutocannonResult) => void,
  ): AutocannonInstance;

  namespace autocannon {
    export type { AutocannonOptions, AutocannonRequest, AutocannonResult, AutocannonInstance };
  }

  export = autocannon;
}

declare module 'pg' {
  /** A single connection: administrative statements, and named (prepared) ones. */
  export class Client {
    constructor(config: { connectionString: string });
    connect(): Promise<void>;
    query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
    query<R = Record<string, unknown>>(query: {
      name?: string;
      text: string;
      values?: unknown[];
    }): Promise<{ rows: R[] }>;
    end(): Promise<void>;
  }

  /** A pool of connections; a query with a `name` is prepared once per connection. */
  export class Pool {
    constructor(config: { connectionString: string; max?: number });
    query(query: { name?: string; text: string; values?: unknown[] }): Promise<{ rowCount: number | null }>;
    end(): Promise<void>;
  }
}
