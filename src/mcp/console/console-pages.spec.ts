import type { McpConsoleEvent, McpConsoleSession, McpConsoleThroughput } from './mcp-console-records.interface';
import { CONSOLE_CSP } from './mcp-console.controller';
import {
  CONSOLE_ICON,
  envelopeText,
  filterParams,
  renderEventDetail,
  renderEvents,
  renderOverview,
  renderProblem,
  renderSessions,
} from './console-html';

function event(overrides: Partial<McpConsoleEvent> = {}): McpConsoleEvent {
  return {
    id: 'e1',
    createdAt: new Date(Date.UTC(2026, 0, 1)),
    direction: 'inbound',
    mount: 'default',
    server: null,
    sessionRef: 's1',
    principalKey: 'alice',
    kind: 'request',
    method: 'tools/call',
    protocolVersion: '2025-11-25',
    traceId: null,
    request: { jsonrpc: '2.0' },
    response: null,
    status: 200,
    errorCode: null,
    isError: false,
    durationMs: 7,
    note: null,
    tool: 'echo',
    ...overrides,
  };
}

function throughput(overrides: Partial<McpConsoleThroughput> = {}): McpConsoleThroughput {
  return { t: [0, 60], count: [0, 1], errors: [0, 0], p50: [null, 4], p95: [null, 9], truncated: false, ...overrides };
}

function session(overrides: Partial<McpConsoleSession> = {}): McpConsoleSession {
  return {
    id: 's1',
    mount: 'default',
    principalKey: 'alice',
    principalLabel: 'alice',
    clientName: null,
    clientVersion: null,
    protocolVersion: '2025-11-25',
    createdAt: new Date(0),
    lastSeenAt: new Date(0),
    terminatedAt: null,
    state: 'live',
    ...overrides,
  };
}

describe('console pages', () => {
  it('overview: counts requests in the singular and plural, warns when the chart is truncated, and loads the chart scripts', () => {
    const one = renderOverview('/c', throughput(), []);
    expect(one).toContain('<p id="summary">1 request in the last hour, 0 failed.</p>');
    expect(one).not.toContain('class="notice"');
    expect(one).toContain('No events yet.');
    expect(one).toContain('<link rel="stylesheet" href="/c/assets/uPlot.min.css">');
    expect(one).toContain('<script src="/c/assets/console-chart.js"></script>');
    expect(one).toContain('<a href="/c" aria-current="page">Overview</a>');

    const many = renderOverview('/c', throughput({ count: [2, 3], errors: [1, 1], truncated: true }), [event()]);
    expect(many).toContain('<p id="summary">5 requests in the last hour, 2 failed.</p>');
    expect(many).toContain('<p class="notice">');
    expect(many).toContain('<tr data-event="e1">');
  });

  it('every page declares its icon as a data: URI the CSP allows, so a browser never asks the origin for /favicon.ico', () => {
    const pages = [
      renderOverview('/c', throughput(), []),
      renderSessions('/c', { rows: [session()], next: null }, true),
      renderEvents('/c', { rows: [event()], next: null }, {}, true),
      renderEventDetail('/c', event()),
      renderProblem('/c', 'Not found', 'nothing here'),
    ];
    for (const page of pages) {
      const icon = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)">/.exec(page);
      expect(icon?.[1].replace(/&amp;/g, '&')).toBe(CONSOLE_ICON);
    }
    expect(CONSOLE_ICON).toMatch(/^data:image\/svg\+xml,%3Csvg%20/);
    expect(decodeURIComponent(CONSOLE_ICON.slice('data:image/svg+xml,'.length))).toMatch(/^<svg [^>]*>.*<\/svg>$/);
    expect(CONSOLE_CSP).toMatch(/img-src 'self' data:;/);
  });

  it('overview at the root links the Overview tab to "/"', () => {
    expect(renderOverview('', throughput(), [])).toContain('<a href="/" aria-current="page">Overview</a>');
  });

  it('sessions: shows the principal key only when it differs from the label, the client version when known, and says so when empty', () => {
    const now = 90_000;
    const html = renderSessions(
      '/c',
      {
        rows: [
          session({
            id: 'a',
            principalLabel: 'Alice <A>',
            principalKey: 'k-1',
            clientName: 'inspector',
            clientVersion: '1.2',
            lastSeenAt: new Date(30_000),
          }),
          session({ id: 'b', state: 'expired' }),
        ],
        next: null,
      },
      false,
      now,
    );
    expect(html).toContain('<td>Alice &lt;A&gt; <span class="muted">(k-1)</span></td>');
    expect(html).toContain('<td>inspector <span class="muted">1.2</span></td>');
    expect(html).toContain('<tr data-session="b"><td>alice</td><td></td>');
    expect(html).toContain('1m 00s ago');
    expect(html).toContain('<span class="badge expired">expired</span>');
    expect(html).toContain('<span class="muted">No older rows</span>');
    expect(html).toContain('<a href="/c/sessions" rel="first">');
    expect(html).toContain('<a href="/c/sessions" aria-current="page">Sessions</a>');
    expect(renderSessions('/c', { rows: [], next: { at: new Date(1), id: 'x' } }, true)).toContain(
      '<p class="muted">No sessions.</p>',
    );
    expect(renderSessions('/c', { rows: [], next: { at: new Date(1), id: 'x' } }, true)).toContain(
      'href="/c/sessions?before=1.x" rel="next"',
    );
  });

  it('events: the filter form keeps its values, the mount or server is the peer, and a failed call shows its error code', () => {
    const from = new Date(Date.UTC(2026, 1, 3, 4, 5, 6));
    const to = new Date(Date.UTC(2026, 1, 4, 0, 0, 0));
    const html = renderEvents(
      '/c',
      {
        rows: [
          event({ id: 'in', mount: 'mount-a' }),
          event({
            id: 'out',
            direction: 'outbound',
            mount: null,
            server: 'srv-b',
            method: null,
            kind: 'notification',
            errorCode: -32601,
            status: 200,
          }),
        ],
        next: null,
      },
      { method: 'tools/call', tool: 'echo', status: 'error', from, to },
      false,
    );
    expect(html).toContain('<input name="method" value="tools/call"');
    expect(html).toContain('<input name="principal" value=""');
    expect(html).toContain('<option value="error" selected>error</option>');
    expect(html).toContain('<option value="">any</option>');
    expect(html).toContain('name="from" value="2026-02-03T04:05:06"');
    expect(html).toContain('name="to" value="2026-02-04T00:00:00"');
    expect(html).toContain('inbound<br><span class="muted">mount-a</span>');
    expect(html).toContain('outbound<br><span class="muted">srv-b</span>');
    expect(html).toContain('<code>notification</code>');
    expect(html).toContain('<span class="badge error">error</span> <span class="muted">200 / -32601</span>');
    expect(html).toContain('<span class="badge ok">ok</span> <span class="muted">200</span>');
    expect(html).toContain(
      `<a href="/c/events?method=tools%2Fcall&amp;tool=echo&amp;status=error&amp;from=${encodeURIComponent(from.toISOString())}&amp;to=${encodeURIComponent(to.toISOString())}" rel="first">`,
    );
    expect(renderEvents('/c', { rows: [], next: null }, {}, true)).toContain('<option value="" selected>any</option>');
  });

  it('filterParams leaves absent filters undefined and writes dates as ISO', () => {
    expect(filterParams({})).toEqual({
      principal: undefined,
      method: undefined,
      tool: undefined,
      status: undefined,
      from: undefined,
      to: undefined,
    });
    expect(filterParams({ from: new Date(0) }).from).toBe('1970-01-01T00:00:00.000Z');
  });

  it('event detail: names the mount of an inbound row and the server of an outbound one, and shows the trace id only when there is one', () => {
    const inbound = renderEventDetail('/c', event({ traceId: 'abc123', isError: true, request: 'raw <text>' }));
    expect(inbound).toContain('<dt>Mount</dt><dd>default</dd>');
    expect(inbound).toContain('<dt>Trace id</dt><dd>abc123</dd>');
    expect(inbound).toContain('<dt>Tool error (isError)</dt><dd>yes</dd>');
    expect(inbound).toContain('<pre id="request">raw &lt;text&gt;</pre>');
    expect(inbound).toContain('<pre id="response">(none)</pre>');
    expect(inbound).toContain('<title>Event e1 · MCP console</title>');

    const outbound = renderEventDetail('/c', event({ direction: 'outbound', mount: null, server: 'srv-b' }));
    expect(outbound).toContain('<dt>Server</dt><dd>srv-b</dd>');
    expect(outbound).not.toContain('Trace id');
    expect(outbound).toContain('<dt>Tool error (isError)</dt><dd>no</dd>');
    expect(outbound).not.toContain('uPlot');
  });

  it('envelopeText falls back to String() for a value JSON cannot write, and passes short strings through', () => {
    expect(envelopeText({ n: BigInt(1) })).toBe('[object Object]');
    expect(envelopeText('short', 10)).toBe('short');
  });

  it('problem page: escapes the message and marks no tab unless one is given', () => {
    const html = renderProblem('/c', 'Bad request', 'cursor <x> is not valid');
    expect(html).toContain('<p class="problem">cursor &lt;x&gt; is not valid</p>');
    expect(html).not.toContain('aria-current');
    expect(renderProblem('/c', 'Not found', 'no such event', 'events')).toContain(
      '<a href="/c/events" aria-current="page">Events</a>',
    );
  });
});
