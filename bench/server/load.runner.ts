// eslint-disable-next-line @typescript-eslint/no-require-imports -- autocannon's typings use `export =`
import autocannon = require('autocannon');
import type { McpBenchSession } from './mcp.session';

/** What one autocannon run against one target measured and checked. */
export interface LoadResult {
  connections: number;
  /** Wall time of the run, in seconds. */
  seconds: number;
  /** Responses received, whatever their status. */
  completed: number;
  /** Requests written (includes the ones cut off when the run stopped). */
  sent: number;
  /** Correct responses per second. */
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** 2xx responses whose body is not the expected echo result for the request's id. */
  badBodies: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** The first few wrong responses, for the report. */
  samples: string[];
}

const MAX_SAMPLES = 3;

/** Request ids are unique across the whole bench run, so every response can be matched to its request. */
let nextId = 1;

function echoText(id: number): string {
  return `hello from the benchmark #${id}`;
}

/** True when `body` is the JSON-RPC result of `echo` for request `id`. */
function isEchoResult(body: string, id: number): boolean {
  try {
    const message = JSON.parse(body);
    const content = message?.result?.content;
    return (
      message.jsonrpc === '2.0' &&
      message.id === id &&
      message.result.isError !== true &&
      Array.isArray(content) &&
      content.length === 1 &&
      content[0].type === 'text' &&
      content[0].text === echoText(id)
    );
  } catch {
    return false;
  }
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: Float64Array, p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * How long a run lasts: a number of seconds, or a number of requests (`{ requests }`, a warm-up
 * that must give V8 the same number of calls on every target whatever its speed).
 */
export type LoadLength = number | { requests: number };

/**
 * Drives `tools/call echo` at a fixed number of connections for a fixed time (or number of
 * requests) and checks every response: status, JSON-RPC id and the echoed text. Latency
 * percentiles come from the exact per-response times (autocannon's own histogram rounds to whole
 * milliseconds).
 */
export function runLoad(
  url: string,
  session: McpBenchSession,
  connections: number,
  length: LoadLength,
): Promise<LoadResult> {
  const latencies: number[] = [];
  const samples: string[] = [];
  let completed = 0;
  let non2xx = 0;
  let badBodies = 0;
  const note = (text: string) => samples.length < MAX_SAMPLES && samples.push(text);
  const startedAt = process.hrtime.bigint();

  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        pipelining: 1,
        ...(typeof length === 'number' ? { duration: length } : { amount: length.requests }),
        timeout: 10,
        requests: [
          {
            method: 'POST',
            headers: session.headers,
            setupRequest: (request, context) => {
              const id = nextId++;
              context.id = id;
              request.body = JSON.stringify({
                jsonrpc: '2.0',
                id,
                method: 'tools/call',
                params: {
                  name: 'echo',
                  arguments: { text: echoText(id) },
                  ...(session.meta ? { _meta: session.meta } : {}),
                },
              });
              return request;
            },
            onResponse: (status, body, context) => {
              completed++;
              if (status < 200 || status > 299) {
                non2xx++;
                note(`HTTP ${status}: ${body.slice(0, 200)}`);
              } else if (!isEchoResult(body, context.id as number)) {
                badBodies++;
                note(`HTTP ${status}, not the echo of request ${String(context.id)}: ${body.slice(0, 200)}`);
              }
            },
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        const elapsed = Number(process.hrtime.bigint() - startedAt) / 1e9;
        const sorted = Float64Array.from(latencies).sort();
        resolve({
          connections,
          seconds: elapsed,
          completed,
          sent: result.requests.sent,
          reqPerSec: (completed - non2xx - badBodies) / elapsed,
          p50Ms: percentile(sorted, 50),
          p99Ms: percentile(sorted, 99),
          non2xx,
          badBodies,
          errors: result.errors,
          samples,
        });
      },
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status >= 200 && status <= 299) latencies.push(ms);
    });
  });
}
