/** One answer the load driver saw. */
export interface LoadAnswer {
  /** Which caller (0..concurrency-1) sent it. */
  caller: number;
  /** Sequence number of the request across all callers. */
  index: number;
  /** HTTP status, or 0 when the request failed without an answer (dropped connection). */
  status: number;
  /** The body text, or the error message when there was no answer. */
  body: string;
  /** The body parsed as JSON, or undefined. */
  json: unknown;
  /** The error thrown when there was no answer (e.g. `fetch failed`). */
  error?: Error;
  /** Anything the request function wants to keep (e.g. the JSON-RPC id it sent). */
  tag?: string;
  startedAt: number;
  endedAt: number;
}

/** What one request of the load produces: an HTTP answer (or a thrown error, recorded as status 0). */
export interface LoadRequestResult {
  status: number;
  body: string;
  tag?: string;
}

/** How much load: a fixed number of requests, or for a fixed time, or until `stop()`. */
export interface LoadOptions {
  /** Callers sending one request after another. */
  concurrency: number;
  /** Stop after this many requests in total. */
  requests?: number;
  /** Stop starting requests after this long. */
  durationMs?: number;
  /** Pause of each caller between two requests. @default 0 */
  pauseMs?: number;
}

/** A running load: its answers so far, and how to end it. */
export interface RunningLoad {
  answers: LoadAnswer[];
  /** Stops starting new requests; resolves with every answer once the ones in flight are back. */
  stop(): Promise<LoadAnswer[]>;
  /** Resolves with every answer when the load ends on its own (requests or duration reached). */
  done: Promise<LoadAnswer[]>;
}

/**
 * Bounded load: `concurrency` callers each send `request(index)` one after another until the
 * request count or the duration is reached (or `stop()`), and every answer is recorded with its
 * timing. A request that throws is recorded as status 0 with the error, never lost.
 */
export function startLoad(
  options: LoadOptions,
  request: (index: number, caller: number) => Promise<LoadRequestResult>,
): RunningLoad {
  if (options.requests === undefined && options.durationMs === undefined)
    throw new Error('Give requests or durationMs (or both): the load must be bounded');
  const answers: LoadAnswer[] = [];
  const until = options.durationMs === undefined ? Infinity : Date.now() + options.durationMs;
  let next = 0;
  let stopped = false;
  const more = () => !stopped && Date.now() < until && (options.requests === undefined || next < options.requests);
  const caller = async (id: number) => {
    while (more()) {
      const index = next++;
      const startedAt = Date.now();
      try {
        const result = await request(index, id);
        let json: unknown;
        try {
          json = result.body ? JSON.parse(result.body) : undefined;
        } catch {
          json = undefined;
        }
        answers.push({
          caller: id,
          index,
          status: result.status,
          body: result.body,
          json,
          tag: result.tag,
          startedAt,
          endedAt: Date.now(),
        });
      } catch (error) {
        const err = error instanceof Error ? error : new Error(String(error));
        answers.push({
          caller: id,
          index,
          status: 0,
          body: err.message,
          json: undefined,
          error: err,
          startedAt,
          endedAt: Date.now(),
        });
      }
      if (options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
  };
  const done = Promise.all(Array.from({ length: options.concurrency }, (_, i) => caller(i))).then(() => answers);
  return {
    answers,
    done,
    stop: () => {
      stopped = true;
      return done;
    },
  };
}
