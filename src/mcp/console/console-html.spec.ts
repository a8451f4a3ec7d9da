import { envelopeText, escapeHtml, formatAge, formatTime, jsonIsland, renderEvents, renderTasks } from './console-html';

describe('console HTML', () => {
  it('escapes the five HTML metacharacters and prints nothing for null', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    expect(escapeHtml(null)).toBe('');
    expect(escapeHtml(undefined)).toBe('');
    expect(escapeHtml(42)).toBe('42');
  });

  it('writes a JSON island that cannot close its script element, and that parses back to the value', () => {
    const value = { text: '</script><script>alert(1)</script>', amp: 'a&b', sep: '\u2028\u2029' };
    const island = jsonIsland(value);
    expect(island).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(island)).toEqual(value);
  });

  it('prints times in UTC, ages in the largest two units, and envelopes as pretty JSON cut at a limit', () => {
    expect(formatTime(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))).toBe('2026-01-02 03:04:05.006 UTC');
    expect(formatTime(null)).toBe('');
    expect(formatAge(-5)).toBe('0s');
    expect(formatAge(59_999)).toBe('59s');
    expect(formatAge(187_000)).toBe('3m 07s');
    expect(formatAge(3_720_000)).toBe('1h 02m');
    expect(formatAge(50 * 3_600_000)).toBe('2d 02h');
    expect(envelopeText(null)).toBe('(none)');
    expect(envelopeText({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(envelopeText({ text: 'x'.repeat(50) }, 10)).toMatch(
      /^\{\n {2}"text"\n… \(\d+ more characters: open the event\)$/,
    );
  });

  it('renders every stored value of an event escaped, and the pager keeps the filters', () => {
    const hostile = '<img src=x onerror=alert(1)>';
    const html = renderEvents(
      '/c',
      {
        rows: [
          {
            id: 'e1',
            createdAt: new Date(0),
            direction: 'outbound',
            mount: null,
            server: hostile,
            sessionRef: null,
            principalKey: hostile,
            kind: 'request',
            method: hostile,
            protocolVersion: null,
            traceId: null,
            request: { params: { name: hostile } },
            response: hostile,
            status: null,
            errorCode: null,
            isError: false,
            durationMs: 3,
            note: null,
            tool: hostile,
          },
        ],
        next: { at: new Date(5), id: 'e1' },
      },
      { principal: hostile, status: 'ok' },
      true,
    );
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain(
      'href="/c/events?principal=%3Cimg+src%3Dx+onerror%3Dalert%281%29%3E&amp;status=ok&amp;before=5.e1" rel="next"',
    );
    expect(html).not.toContain('rel="first"');
  });

  it('renders a task without its arguments or outcome, and says so when there are none', () => {
    const html = renderTasks(
      '/c',
      {
        rows: [
          {
            id: 't<1>',
            mount: 'default',
            toolName: 'report',
            status: 'working',
            principalKey: 'bob',
            statusMessage: 'step <1>',
            createdAt: new Date(0),
            updatedAt: new Date(1),
          },
        ],
        next: null,
      },
      false,
    );
    expect(html).toContain('<tr data-task="t&lt;1&gt;">');
    expect(html).toContain('<td>step &lt;1&gt;</td>');
    expect(html).toContain('<a href="/c/tasks" rel="first">');
    expect(renderTasks('/c', { rows: [], next: null }, true)).toContain('No tasks.');
  });
});
