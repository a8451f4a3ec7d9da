import { Agent, request } from 'node:http';
import type { McpBenchSession } from '../server/mcp.session';

/** One replica the load is sent to. */
export interface ReplicaEndpoint {
  /** `http://host:port/mcp`. */
  url: string;
}

/** A session and the replica (index into the endpoints) that opened it. */
export interface HomedSession {
  session: McpBenchSession;
  home: number;
}

/** What one run of the session load measured and checked. */
export interface SessionLoadResult {
  seconds: number;
  /** Responses received, whatever they were. */
  completed: number;
  /** Requests written (includes the ones in flight when the run stopped). */
  sent: number;
  /** Correct responses. */
  ok: number;
  /** Correct responses that came from a replica other than the one that opened their session. */
  okElsewhere: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Wrong responses (status, id or text) and transport errors. */
  failures: number;
  /** The first few failures, for the report. */
  samples: string[];
}

/** Request ids are unique across the whole run, so every response can be matched to its request. */
let nextId = 1;

const echoText = (id: number) => `hello from the replicas benchmark #${id}`;

/** True when `body` (JSON, or one SSE `data:` line) is the `echo` result of request `id`. */
function isEchoResult(body: string, id: number): boolean {
  const json = body.startsWith('{') ? body : /^data: (.*)$/m.exec(body)?.[1];
  if (!json) return false;
  try {
    const message = JSON.parse(json);
    const content = message?.result?.content;
    return message.id === id && message.result.isError !== true && content?.[0]?.text === echoText(id);
  } catch {
    return false;
  }
}

function percentile(sorted: Float64Array, p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** A small deterministic generator, so runs choose the same replicas. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
}

/**
 * Drives `tools/call echo` over plain keep-alive HTTP: `concurrency` loops, loop `i` using session
 * `i mod sessions`, each request sent to the session's home replica except a share `elsewhere`
 * (0..1) sent to one of the others (none with one replica). Every response is checked: status
 * 200, the JSON-RPC id, the echoed text.
 */
export async function runSessionLoad(
  endpoints: ReplicaEndpoint[],
  sessions: HomedSession[],
  concurrency: number,
  seconds: number,
  elsewhere: number,
): Promise<SessionLoadResult> {
  const agents = endpoints.map(() => new Agent({ keepAlive: true, maxSockets: concurrency }));
  const targets = endpoints.map((endpoint) => new URL(endpoint.url));
  const latencies: number[] = [];
  const samples: string[] = [];
  let completed = 0;
  let sent = 0;
  let ok = 0;
  let okElsewhere = 0;
  let failures = 0;
  const fail = (text: string) => {
    failures++;
    if (samples.length < 3) samples.push(text);
  };
  const startedAt = process.hrtime.bigint();
  const stopAt = Date.now() + seconds * 1000;

  const call = (replica: number, homed: HomedSession): Promise<void> =>
    new Promise((resolve) => {
      const id = nextId++;
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: echoText(id) } },
      });
      const target = targets[replica];
      const began = process.hrtime.bigint();
      sent++;
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent: agents[replica],
          headers: { ...homed.session.headers, 'Content-Length': Buffer.byteLength(body) },
          timeout: 10_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            completed++;
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode === 200 && isEchoResult(text, id)) {
              ok++;
              if (replica !== homed.home) okElsewhere++;
              latencies.push(Number(process.hrtime.bigint() - began) / 1e6);
            } else {
              fail(`replica ${replica + 1}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
            }
            resolve();
          });
          res.on('error', (error) => {
            fail(`replica ${replica + 1}: ${error.message}`);
            resolve();
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out after 10 s')));
      req.on('error', (error) => {
        fail(`replica ${replica + 1}: ${error.message}`);
        resolve();
      });
      req.end(body);
    });

  const loop = async (index: number) => {
    const homed = sessions[index % sessions.length];
    const next = random(index + 1);
    while (Date.now() < stopAt) {
      let replica = homed.home;
      if (endpoints.length > 1 && next() < elsewhere) {
        replica = (homed.home + 1 + Math.floor(next() * (endpoints.length - 1))) % endpoints.length;
      }
      await call(replica, homed);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, index) => loop(index)));
  for (const agent of agents) agent.destroy();
  const elapsed = Number(process.hrtime.bigint() - startedAt) / 1e9;
  const sorted = Float64Array.from(latencies).sort();
  return {
    seconds: elapsed,
    completed,
    sent,
    ok,
    okElsewhere,
    reqPerSec: ok / elapsed,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    failures,
    samples,
  };
}
