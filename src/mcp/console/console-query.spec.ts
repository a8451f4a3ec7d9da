import { ConsoleQueryError, formatCursor, parseCursor, parseEventFilter, parseTime, single } from './console-query';

describe('console query parsing', () => {
  it('reads one trimmed value, treats empty as absent and refuses a repeated or overlong key', () => {
    expect(single({ a: ' x ' }, 'a')).toBe('x');
    expect(single({ a: '  ' }, 'a')).toBeUndefined();
    expect(single({}, 'a')).toBeUndefined();
    expect(() => single({ a: ['x', 'y'] }, 'a')).toThrow(new ConsoleQueryError('"a" was given 2 times: give it once.'));
    expect(single({ a: 'x'.repeat(255) }, 'a')).toHaveLength(255);
    expect(() => single({ a: 'x'.repeat(256) }, 'a')).toThrow(/longer than 255 characters/);
  });

  it('reads a datetime-local value as UTC and an ISO time with its zone, and refuses anything else', () => {
    expect(parseTime('from', undefined)).toBeUndefined();
    expect(parseTime('from', '2026-01-31T14:05')).toEqual(new Date(Date.UTC(2026, 0, 31, 14, 5)));
    expect(parseTime('from', '2026-01-31T14:05:06')).toEqual(new Date(Date.UTC(2026, 0, 31, 14, 5, 6)));
    expect(parseTime('from', '2026-01-31 14:05:06.250')).toEqual(new Date(Date.UTC(2026, 0, 31, 14, 5, 6, 250)));
    expect(parseTime('from', '2026-01-31T14:05:00.000Z')).toEqual(new Date(Date.UTC(2026, 0, 31, 14, 5)));
    expect(parseTime('from', '2026-01-31T16:05:00+02:00')).toEqual(new Date(Date.UTC(2026, 0, 31, 14, 5)));
    for (const bad of ['yesterday', '2026-01-31', '1700000000000', '2026-13-45T99:99', '2026-01-31T14:05Zjunk']) {
      expect(() => parseTime('from', bad)).toThrow(ConsoleQueryError);
    }
  });

  it('reads the event filters and refuses an unknown status or an empty time range', () => {
    expect(parseEventFilter({})).toEqual({});
    expect(
      JSON.parse(
        JSON.stringify(
          parseEventFilter({
            principal: 'alice',
            method: 'tools/call',
            tool: 'echo',
            status: 'error',
            from: '2026-01-01T00:00',
            to: '2026-01-02T00:00',
          }),
        ),
      ),
    ).toEqual({
      principal: 'alice',
      method: 'tools/call',
      tool: 'echo',
      status: 'error',
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-02T00:00:00.000Z',
    });
    expect(() => parseEventFilter({ status: 'maybe' })).toThrow('"status" must be ok or error, got "maybe".');
    expect(() => parseEventFilter({ from: '2026-01-01T00:00', to: '2026-01-01T00:00' })).toThrow(
      '"from" must be before "to".',
    );
  });

  it('round-trips a cursor and refuses one it did not write', () => {
    const cursor = { at: new Date(1767225600123), id: '8719bfb5-b240-4439-ae5a-294d98663613' };
    expect(formatCursor(cursor)).toBe('1767225600123.8719bfb5-b240-4439-ae5a-294d98663613');
    expect(parseCursor({ before: formatCursor(cursor) })).toEqual(cursor);
    expect(parseCursor({ before: '1.tAsK_id-64' })).toEqual({ at: new Date(1), id: 'tAsK_id-64' });
    expect(parseCursor({})).toBeNull();
    for (const bad of ['nonsense', '1.', '.abc', '1.<x>', '1.a b', `1.${'a'.repeat(65)}`, '1234567890123456.a']) {
      expect(() => parseCursor({ before: bad })).toThrow(/is not a page cursor/);
    }
  });
});
