/**
 * Loaded into a target of `bench:segments` with `--require` (compiled to JavaScript by the bench):
 * times each POST the server answers, in the server's own process, split where the audit row's
 * INSERT leaves and comes back. It wraps three functions and changes nothing they do:
 * - `http.Server#listen`: a first `request` listener notes when a POST's headers were read;
 * - `pg`'s `Client#query`: an INSERT into `mcp_events` notes when it was handed to the
 *   connection (its bytes are written in that call) and when its result came back;
 * - `http.ServerResponse#end`: notes when the answer was handed over and when `end` returned.
 *
 * The bench drives one connection (c=1), so one request is in flight at a time and the marks
 * need no request ids. On SIGUSR2 the process appends the medians of every segment since the last
 * signal to `BENCH_SEGMENTS_FILE`, as one JSON line, and starts over.
 */
import { appendFileSync } from 'node:fs';
import * as http from 'node:http';
import { join } from 'node:path';

/** The segments of one request, in µs, as the bench prints them. */
export interface SegmentMedians {
  /** Requests measured. */
  requests: number;
  /** From the POST's headers to the audit INSERT handed to the connection. */
  toInsert: number;
  /** From the INSERT handed over to its result's callback (PostgreSQL, the wire, waking up). */
  insert: number;
  /** From the INSERT's result to `res.end` (the answer handed to Node). */
  toAnswer: number;
  /** Inside `res.end` (writing the answer to the socket). */
  answerWrite: number;
  /** From `res.end` to the next POST's headers (the client's turn, reading the next request). */
  toNext: number;
}

type Marks = { arrived: number; sent: number; returned: number };

const file = process.env.BENCH_SEGMENTS_FILE;
const now = (): number => Number(process.hrtime.bigint()) / 1000;
const samples: Record<Exclude<keyof SegmentMedians, 'requests'>, number[]> = {
  toInsert: [],
  insert: [],
  toAnswer: [],
  answerWrite: [],
  toNext: [],
};
let marks: Marks = { arrived: 0, sent: 0, returned: 0 };
let lastEnd = 0;

// eslint-disable-next-line @typescript-eslint/unbound-method -- called with its server as `this` below
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (this: http.Server, ...args: unknown[]) {
  this.prependListener('request', (req: http.IncomingMessage) => {
    if (req.method !== 'POST') return;
    const arrived = now();
    if (lastEnd) samples.toNext.push(arrived - lastEnd);
    marks = { arrived, sent: 0, returned: 0 };
  });
  return listen.apply(this, args as Parameters<typeof listen>);
} as typeof listen;

// eslint-disable-next-line @typescript-eslint/unbound-method -- called with its response as `this` below
const end = http.ServerResponse.prototype.end;
http.ServerResponse.prototype.end = function (this: http.ServerResponse, ...args: unknown[]) {
  const ending = now();
  const { arrived, sent, returned } = marks;
  const result = end.apply(this, args as Parameters<typeof end>);
  const ended = now();
  if (arrived && sent > arrived && returned > sent) {
    samples.toInsert.push(sent - arrived);
    samples.insert.push(returned - sent);
    samples.toAnswer.push(ending - returned);
    samples.answerWrite.push(ended - ending);
  }
  marks = { arrived: 0, sent: 0, returned: 0 };
  lastEnd = ended;
  return result;
} as typeof end;

// The target's own `pg` (the example app's, or the floor's), resolved from its working directory.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pg = require(require.resolve('pg', { paths: [process.cwd(), join(process.cwd(), 'node_modules')] })) as {
  Client: { prototype: { query: (...args: unknown[]) => unknown } };
};
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  const config = args[0] as string | { text?: string } | undefined;
  const text = typeof config === 'string' ? config : config?.text;
  if (!text || !/^INSERT INTO "?mcp_events"?/.test(text)) return query.apply(this, args);
  // The pool hands its callback as the last function argument: note when it is called.
  let at = args.length - 1;
  while (at >= 0 && typeof args[at] !== 'function') at--;
  if (at >= 0) {
    const callback = args[at] as (...results: unknown[]) => unknown;
    args[at] = function (this: unknown, ...results: unknown[]) {
      marks.returned = now();
      return callback.apply(this, results);
    };
  }
  marks.sent = now();
  return query.apply(this, args);
};

function median(values: number[]): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[sorted.length >> 1]);
}

process.on('SIGUSR2', () => {
  const medians: SegmentMedians = {
    requests: samples.toInsert.length,
    toInsert: median(samples.toInsert),
    insert: median(samples.insert),
    toAnswer: median(samples.toAnswer),
    answerWrite: median(samples.answerWrite),
    toNext: median(samples.toNext),
  };
  if (file) appendFileSync(file, `${JSON.stringify(medians)}\n`);
  for (const list of Object.values(samples)) list.length = 0;
});
