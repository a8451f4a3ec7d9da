import { Injectable } from '@nestjs/common';
import type { McpEventInput, McpEventRecord, McpEventSink } from '../persistence/interfaces/mcp-event-sink.interface';
import { JsonText } from '../persistence/json-text';
import { newEventRecord } from '../persistence/new-records';

/** What a jsonb column would give back: parsed JSON text, or a JSON copy of a value. */
function asStored(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof JsonText) return JSON.parse(value.text);
  return JSON.parse(JSON.stringify(value));
}

/**
 * Audit rows in process memory, for tests: `events` holds every recorded row, in order, with
 * the same defaults the TypeORM sink writes and the envelopes as plain JSON values.
 */
@Injectable()
export class InMemoryMcpEventSink implements McpEventSink {
  /** The recorded rows, oldest first; a test may read or clear it. */
  readonly events: McpEventRecord[] = [];

  /** Keeps one row; resolves at once. */
  async record(event: McpEventInput): Promise<void> {
    const row = newEventRecord(event);
    this.events.push({ ...row, request: asStored(row.request), response: asStored(row.response) });
  }
}
