/** One event kept for resumption: its sequence number on its stream, the message, and whether it ended the stream. */
export interface McpLoggedEvent {
  seq: number;
  /** The serialized JSON-RPC message. */
  data: string;
  /** True for the last event of a POST stream (the response). */
  final: boolean;
}

/**
 * The recent events of each SSE stream of a session, so a client that lost its connection can
 * reconnect with `Last-Event-ID` (to any replica) and get what it missed. Bounded: each stream
 * keeps its last `maxEvents` events for `ttlMs` after its last event; older ones are gone and a
 * resumption from before them gets the ones still kept.
 */
export interface McpEventLog {
  /**
   * Appends an event to the stream `streamId` of `sessionId`. Without `seq` the log numbers it
   * (1, 2, ... per stream, shared by every replica); with `seq` the caller did.
   * Resolves to the event's sequence number.
   */
  append(
    sessionId: string,
    streamId: string,
    data: string,
    options?: { seq?: number; final?: boolean },
  ): Promise<number>;
  /** The kept events of a stream after sequence number `after`, in order. */
  after(sessionId: string, streamId: string, after: number): Promise<McpLoggedEvent[]>;
  /** The last sequence number the log handed out on a stream it numbers (0 when none). */
  lastSeq(sessionId: string, streamId: string): Promise<number>;
  /** Forgets the events of a session's stream (the session ended). */
  forget(sessionId: string, streamId: string): Promise<void>;
}

/** Bounds of an event log. */
export interface McpEventLogBounds {
  /** Events kept per stream. */
  maxEvents: number;
  /** How long a stream's events are kept after its last event, in ms. */
  ttlMs: number;
}
