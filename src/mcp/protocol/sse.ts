/**
 * An incremental parser for `text/event-stream` bodies, following the event-stream
 * interpretation rules of the HTML standard: lines end in CRLF, LF or CR; a blank line
 * dispatches; `:` starts a comment; `data` lines are joined with LF; `id` sets the last event
 * id (unless it contains NUL); `retry` takes ASCII digits only. Pure TypeScript.
 */

/** One dispatched server-sent event. */
export interface SseEvent {
  /** The `event` field, or `message` when the event had none. */
  type: string;
  /** The `data` lines joined with LF (without the final LF). */
  data: string;
  /** The last event id of the stream when this event was dispatched ('' when none yet). */
  lastEventId: string;
}

const LINE_END = /\r\n|\r|\n/g;

/** An event (its unfinished line and its data so far) grew past `maxEventChars`. */
export class SseEventTooLargeError extends Error {
  constructor(
    /** The limit that was passed, in characters. */
    readonly maxEventChars: number,
  ) {
    super(`an event grew past ${maxEventChars} characters`);
    this.name = 'SseEventTooLargeError';
  }
}

/** Options of an `SseParser`. */
export interface SseParserOptions {
  /**
   * Most characters one event may hold: the line being read plus the event's `data` so far.
   * Past it, `push` throws `SseEventTooLargeError` (a stream without a newline cannot grow
   * memory without bound).
   * @default Infinity
   */
  maxEventChars?: number;
}

/**
 * Feed it decoded text chunks as they arrive; it returns the events each chunk completed. An
 * event still open when the stream ends is discarded, as the standard requires. Each character
 * is looked at once: an unfinished line is kept as pieces and joined when its end arrives, so a
 * long line costs linear time, not a rescan per chunk.
 */
export class SseParser {
  /** The stream's last event id, for a `Last-Event-ID` header when resuming. */
  lastEventId = '';
  /** The reconnection delay the server asked for with `retry`, in ms, or null. */
  retryMs: number | null = null;

  private readonly maxEventChars: number;
  private partial: string[] = [];
  private partialChars = 0;
  private atStart = true;
  private skipLeadingLf = false;
  private eventType = '';
  private dataLines: string[] = [];
  private dataChars = 0;
  private hasData = false;

  constructor(options: SseParserOptions = {}) {
    this.maxEventChars = options.maxEventChars ?? Infinity;
  }

  /** Parses one chunk of decoded text and returns the events it completed. @throws SseEventTooLargeError */
  push(chunk: string): SseEvent[] {
    let text = chunk;
    if (this.atStart && text.length > 0) {
      this.atStart = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skipLeadingLf && text.length > 0) {
      this.skipLeadingLf = false;
      if (text[0] === '\n') text = text.slice(1);
    }
    const events: SseEvent[] = [];
    let start = 0;
    LINE_END.lastIndex = 0;
    for (let match = LINE_END.exec(text); match; match = LINE_END.exec(text)) {
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (match[0] === '\r' && match.index === text.length - 1) this.skipLeadingLf = true;
      let line = text.slice(start, match.index);
      if (this.partial.length > 0) {
        line = this.partial.join('') + line;
        this.partial = [];
        this.partialChars = 0;
      }
      start = match.index + match[0].length;
      this.checkSize(line.length);
      const event = this.processLine(line);
      if (event) events.push(event);
    }
    if (start < text.length) {
      const rest = text.slice(start);
      this.partial.push(rest);
      this.partialChars += rest.length;
      this.checkSize(this.partialChars);
    }
    return events;
  }

  private checkSize(lineChars: number): void {
    if (this.dataChars + lineChars > this.maxEventChars) throw new SseEventTooLargeError(this.maxEventChars);
  }

  private processLine(line: string): SseEvent | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.dataLines.push(value);
        this.dataChars += value.length + 1;
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break;
    }
    return null;
  }

  private dispatch(): SseEvent | null {
    const event: SseEvent | null = this.hasData
      ? { type: this.eventType || 'message', data: this.dataLines.join('\n'), lastEventId: this.lastEventId }
      : null;
    this.eventType = '';
    this.dataLines = [];
    this.dataChars = 0;
    this.hasData = false;
    return event;
  }
}
