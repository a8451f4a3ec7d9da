import { classifyJsonRpc } from '../../../protocol/jsonrpc';
import { MAX_JSON_RPC_DEPTH, jsonNestsDeeperThan } from '../../../protocol/json-depth';
import { SseParser } from '../../../protocol/sse';
import { abortableDelay } from './http-delivery-policy';
import type { HttpCall } from './http-call';
import { HttpServerMessages } from './http-server-messages';
import { isEventStream } from './http-sse-reader';
import type { HttpSession, HttpWire } from './http-wire';

/** How often a GET refused with 409 (the previous stream of the session is still being closed) is tried again. */
const CONFLICT_RETRIES = 3;
/** First delay before such a retry, in ms; doubled each time. */
const CONFLICT_DELAY_MS = 25;

/** One open standalone stream, shared by every call in flight on its session. */
interface StandaloneStream {
  controller: AbortController;
  /** The calls listening, oldest first: server requests are answered in the context of the first one still running. */
  calls: HttpCall[];
  messages: Map<HttpCall, HttpServerMessages>;
  /** Settles once the stream is open, refused or failed. */
  ready: Promise<void>;
}

/**
 * The standalone GET SSE streams of 2025 sessions: the channel on which a server sends requests
 * and notifications that belong to no particular POST (an SDK 1.x server's `server.request()`).
 * A stream is opened when the first request of a session goes out and closed when the last one
 * in flight ends, so a worker that runs one job per process leaves nothing open. A server that
 * answers the GET with 405 offers no such stream; that is remembered for the endpoint.
 */
export class HttpStandaloneStreams {
  private unsupported = false;
  private readonly streams = new Map<string, StandaloneStream>();

  constructor(
    private readonly wire: HttpWire,
    /** Largest event, in characters (see `HttpTransportOptions.maxEventChars`). */
    private readonly maxEventChars = Infinity,
  ) {}

  /**
   * Listens on the session's stream for the duration of `call`: resolves once the stream is open
   * (or known to be unavailable) to the function that stops listening. Never rejects for the
   * stream's sake: a server without one simply sends nothing there.
   */
  async listen(session: HttpSession, call: HttpCall): Promise<() => void> {
    const id = session.id;
    if (!id || this.unsupported) return () => undefined;
    let stream = this.streams.get(id);
    if (!stream) {
      const controller = new AbortController();
      stream = { controller, calls: [], messages: new Map(), ready: Promise.resolve() };
      const opened = stream;
      stream.ready = this.open(id, session, opened).catch(() => this.forget(id, opened));
      this.streams.set(id, stream);
    }
    stream.calls.push(call);
    const current = stream;
    await untilSettledOrAborted(stream.ready, call.signal);
    return () => this.release(id, current, call);
  }

  private release(id: string, stream: StandaloneStream, call: HttpCall): void {
    stream.calls = stream.calls.filter((c) => c !== call);
    stream.messages.delete(call);
    if (stream.calls.length === 0) this.forget(id, stream);
  }

  private forget(id: string, stream: StandaloneStream): void {
    stream.controller.abort(new Error('standalone stream closed'));
    if (this.streams.get(id) === stream) this.streams.delete(id);
  }

  /** Opens the stream and keeps reading it in the background; resolves when the GET was answered. */
  private async open(id: string, session: HttpSession, stream: StandaloneStream): Promise<void> {
    const signal = stream.controller.signal;
    for (let attempt = 0; ; attempt++) {
      const response = await this.wire.send({ method: 'GET', session, signal });
      if (response.ok && isEventStream(response) && response.body) {
        // A stream the server ended is forgotten, so the next call of the session opens a new one.
        void this.read(response.body, session, stream)
          .catch(() => undefined)
          .finally(() => this.forget(id, stream));
        return;
      }
      await response.body?.cancel().catch(() => undefined);
      if (response.status === 405) this.unsupported = true;
      if (response.status !== 409 || attempt >= CONFLICT_RETRIES)
        throw new Error(`no standalone stream: HTTP ${response.status}`);
      await abortableDelay(CONFLICT_DELAY_MS * 2 ** attempt, signal);
    }
  }

  private async read(body: ReadableStream<Uint8Array>, session: HttpSession, stream: StandaloneStream): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    // An oversized event throws here: the stream is dropped like one the server ended.
    const parser = new SseParser({ maxEventChars: this.maxEventChars });
    try {
      for (;;) {
        const chunk = await reader.read();
        const text = chunk.done || !chunk.value ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
        for (const event of parser.push(text)) {
          if (
            event.type !== 'message' ||
            event.data.trim() === '' ||
            jsonNestsDeeperThan(event.data, MAX_JSON_RPC_DEPTH)
          )
            continue;
          let value: unknown;
          try {
            value = JSON.parse(event.data);
          } catch {
            continue;
          }
          this.deliver(value, session, stream);
        }
        if (chunk.done) return;
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
  }

  /** Hands a message to the first call still running; with none left, nobody is there to answer it. */
  private deliver(value: unknown, session: HttpSession, stream: StandaloneStream): void {
    const call = stream.calls.find((c) => !c.stopped);
    if (!call) return;
    let messages = stream.messages.get(call);
    if (!messages) {
      messages = new HttpServerMessages(this.wire, call, session, 'session');
      stream.messages.set(call, messages);
    }
    const message = classifyJsonRpc(value);
    if (message.kind === 'request') messages.answer(message.message);
    else if (message.kind === 'notification') messages.notify(message.message);
  }
}

/** Waits for `promise`, or until `signal` aborts (the call's own error then surfaces where the call goes on). */
function untilSettledOrAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    promise.then(done, done);
  });
}
