import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { InFlightSet } from '../../in-flight-set';

/** The stream id of a session's standalone GET stream: its event ids are `session_<n>`. */
export const SESSION_STREAM_ID = 'session';

/** A session's open stream on this process: its GET stream, or the stdio connection that carries it. */
export interface McpOpenStream {
  /** Key of the principal that opened it (for `limits.streamsPerPrincipal`). */
  principalKey: string;
  /** Writes an event numbered by the session's event log; false when the stream is gone. */
  deliver(seq: number, json: string): boolean;
  /** Ends the stream and lets go of what it holds (timer, claim); also the response's 'close' listener. */
  close: () => void;
}

/** A POSTed request of a session being handled on this process. */
export interface TrackedRequest {
  readonly principalKey: string;
  /** Aborts the handling and ends its stream (the session ended). */
  close(): void;
}

/** Where a tracked request keeps the id of its session. */
const SESSION_OF = Symbol('durable-mcp tracked session');

type SessionRequest = TrackedRequest & { [SESSION_OF]?: string };

/** A POST stream resumed with `Last-Event-ID` and followed on this process. */
interface TrackedResumption {
  principalKey: string;
  /** Ends the resumed stream (the session ended, or the app shuts down). */
  close(): void;
}

/**
 * The standalone GET streams open on this process, one per session at most, the POST streams
 * resumed here, and the POSTed requests in progress by session, so a session that ends (DELETE,
 * or found idle on any replica) closes everything it holds here. Session-level notifications
 * are written here when the stream is local; the session bus brings them from other replicas.
 * All streams end when the app shuts down, so closing the server never waits on a client that
 * keeps listening.
 */
@Injectable()
export class McpStreamRegistry implements BeforeApplicationShutdown {
  private readonly streams = new Map<string, McpOpenStream>();
  private readonly perPrincipal = new Map<string, number>();
  /**
   * The requests in progress, of every session: each keeps its session id. An `InFlightSet`, not
   * a map of sets by session: a request joins and leaves on every call, and a session's set would
   * come and go with its calls.
   */
  private readonly requests = new InFlightSet<SessionRequest>();
  private readonly resumptions = new Map<string, Set<TrackedResumption>>();
  private resumptionCount = 0;

  /** True when this process holds the session's stream. */
  has(sessionId: string): boolean {
    return this.streams.has(sessionId);
  }

  /** Records the session's stream; false when the session already has one here. */
  add(sessionId: string, stream: McpOpenStream): boolean {
    if (this.streams.has(sessionId)) return false;
    this.streams.set(sessionId, stream);
    this.perPrincipal.set(stream.principalKey, this.countFor(stream.principalKey) + 1);
    return true;
  }

  /** Forgets the stream, if it is still the session's stream. */
  remove(sessionId: string, stream: McpOpenStream): void {
    if (this.streams.get(sessionId) !== stream) return;
    this.streams.delete(sessionId);
    const left = this.countFor(stream.principalKey) - 1;
    if (left > 0) this.perPrincipal.set(stream.principalKey, left);
    else this.perPrincipal.delete(stream.principalKey);
  }

  /** How many GET streams the principal holds on this process, resumed POST streams included. */
  countFor(principalKey: string): number {
    return this.perPrincipal.get(principalKey) ?? 0;
  }

  /**
   * Tracks a POSTed request of the session until `untrackRequest`; its `close` runs if the
   * session ends first. The request is the caller's own object: tracking makes no closure.
   */
  trackRequest(sessionId: string, request: TrackedRequest): void {
    (request as SessionRequest)[SESSION_OF] = sessionId;
    this.requests.add(request);
  }

  /** Stops tracking a request `trackRequest` took (once, as its caller's `finally` does). */
  untrackRequest(request: TrackedRequest): void {
    this.requests.delete(request);
  }

  /**
   * Tracks a resumed POST stream until the returned function is called: it counts against its
   * principal's streams like a GET stream, and `close` runs if the session ends or the app shuts
   * down first.
   */
  trackResumption(sessionId: string, principalKey: string, close: () => void): () => void {
    const resumption: TrackedResumption = { principalKey, close };
    const set = this.resumptions.get(sessionId) ?? new Set<TrackedResumption>();
    set.add(resumption);
    this.resumptions.set(sessionId, set);
    this.resumptionCount++;
    this.perPrincipal.set(principalKey, this.countFor(principalKey) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      set.delete(resumption);
      if (set.size === 0 && this.resumptions.get(sessionId) === set) this.resumptions.delete(sessionId);
      this.resumptionCount--;
      const left = this.countFor(principalKey) - 1;
      if (left > 0) this.perPrincipal.set(principalKey, left);
      else this.perPrincipal.delete(principalKey);
    };
  }

  /** How many resumed POST streams are open on this process (for `streams.resumeFollowers`). */
  get resuming(): number {
    return this.resumptionCount;
  }

  /** Sizes of the maps, for leak checks: all return to zero once every stream and request ended. */
  get sizes(): { streams: number; principals: number; requestSessions: number } {
    return {
      streams: this.streams.size,
      principals: this.perPrincipal.size,
      requestSessions: this.requestSessions().size,
    };
  }

  /** How many sessions have a request in progress or a GET stream open on this process. */
  activeSessions(): number {
    const sessions = this.requestSessions();
    for (const sessionId of this.streams.keys()) sessions.add(sessionId);
    return sessions.size;
  }

  /** The sessions with a request in progress here. */
  private requestSessions(): Set<string> {
    return new Set(this.requests.values().map((request) => request[SESSION_OF] as string));
  }

  /** The sessions whose GET stream is open on this process. */
  sessionIds(): string[] {
    return [...this.streams.keys()];
  }

  /** Writes an event of the session's log on its stream; false when it has none here. */
  deliver(sessionId: string, seq: number, json: string): boolean {
    const stream = this.streams.get(sessionId);
    return !!stream && stream.deliver(seq, json);
  }

  /**
   * Ends the session's stream and its requests in progress here (the session ended). With
   * `principalKey`, only what that principal holds: an idle session is noticed by a request
   * that may come from anyone knowing the id.
   */
  end(sessionId: string, principalKey?: string): void {
    const stream = this.streams.get(sessionId);
    if (stream && (principalKey === undefined || stream.principalKey === principalKey)) stream.close();
    for (const request of this.requests) {
      if (request[SESSION_OF] !== sessionId) continue;
      if (principalKey === undefined || request.principalKey === principalKey) request.close();
    }
    for (const resumption of [...(this.resumptions.get(sessionId) ?? [])]) {
      if (principalKey === undefined || resumption.principalKey === principalKey) resumption.close();
    }
  }

  /** @inheritdoc */
  beforeApplicationShutdown(): void {
    for (const stream of [...this.streams.values()]) stream.close();
    for (const set of [...this.resumptions.values()]) for (const resumption of [...set]) resumption.close();
  }
}
