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

const LINE_END = /\r\n|\r|\n/;

/**
 * Feed it decoded text chunks as they arrive; it returns the events each chunk completed. An
 * event still open when the stream ends is discarded, as the standard requires.
 */
export class SseParser {
  /** The stream's last event id, for a `Last-Event-ID` header when resuming. */
  lastEventId = '';
  /** The reconnection delay the server asked for with `retry`, in ms, or null. */
  retryMs: number | null = null;

  private buffer = '';
  private atStart = true;
  private skipLeadingLf = false;
  private eventType = '';
  private dataLines: string[] = [];
  private hasData = false;

  /** Parses one chunk of decoded text and returns the events it completed. */
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
    this.buffer += text;
    const events: SseEvent[] = [];
    for (;;) {
      const match = LINE_END.exec(this.buffer);
      if (!match) break;
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (match[0] === '\r' && match.index === this.buffer.length - 1) {
        this.skipLeadingLf = true;
      }
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.processLine(line);
      if (event) events.push(event);
    }
    return events;
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
    this.hasData = false;
    return event;
  }
}
