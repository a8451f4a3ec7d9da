import type {
  McpConsoleEventFilter,
  McpConsoleEvent,
  McpConsolePage,
  McpConsoleSession,
  McpConsoleTask,
  McpConsoleThroughput,
} from './mcp-console-records.interface';
import { formatCursor } from './console-query';
import { isFailedEvent } from './throughput';

/** Longest envelope text shown inline in the events list; the detail view shows it whole. */
export const INLINE_ENVELOPE_CHARS = 4000;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes a value for HTML text and for quoted attribute values. `null`/`undefined` become empty. */
export function escapeHtml(value: unknown): string {
  if (value === null || value === undefined) return '';
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- any stored value may be rendered; String() is the intended text
  return String(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** JSON that is safe inside a `<script type="application/json">` element (no `<`, `>`, `&`, line separators). */
export function jsonIsland(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** A time as the console prints it: ISO 8601 in UTC. */
export function formatTime(date: Date | null | undefined): string {
  return date ? date.toISOString().replace('T', ' ').replace('Z', ' UTC') : '';
}

/** A duration as `1h 02m`, `3m 07s` or `12s`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d ${String(h % 24).padStart(2, '0')}h`;
}

/** Pretty JSON of a stored envelope, cut at `limit` characters. */
export function envelopeText(value: unknown, limit = Infinity): string {
  if (value === null || value === undefined) return '(none)';
  let text: string;
  try {
    text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  } catch {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a value JSON cannot write (a cycle, a BigInt) is shown as String() writes it
    text = String(value);
  }
  return text.length > limit
    ? `${text.slice(0, limit)}\n… (${text.length - limit} more characters: open the event)`
    : text;
}

/**
 * The console's icon, declared by every page: without one a browser asks the origin for
 * `/favicon.ico`, which the console does not serve (and the host may answer 404). A data: URI
 * costs no request, needs no credentials, and the CSP's `img-src 'self' data:` allows it.
 */
export const CONSOLE_ICON =
  'data:image/svg+xml,' +
  encodeURIComponent(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f2933"/>` +
      `<path d="M3.5 12V4.5l4.5 4.5 4.5-4.5V12" fill="none" stroke="#60a5fa" stroke-width="2"/></svg>`,
  );

/** The pages of the console, for the navigation bar. */
export type ConsolePageName = 'overview' | 'sessions' | 'events' | 'tasks';

interface Layout {
  /** The console's URL path (global prefix included), without a trailing slash. */
  base: string;
  title: string;
  current: ConsolePageName | null;
  body: string;
  /** Adds uPlot's stylesheet and scripts and the chart's data island. */
  chart?: McpConsoleThroughput;
}

function layout({ base, title, current, body, chart }: Layout): string {
  const link = (name: ConsolePageName, href: string, label: string) =>
    `<a href="${escapeHtml(href)}"${current === name ? ' aria-current="page"' : ''}>${label}</a>`;
  const chartHead = chart ? `<link rel="stylesheet" href="${escapeHtml(base)}/assets/uPlot.min.css">` : '';
  const chartTail = chart
    ? `<script type="application/json" id="mcp-chart-data">${jsonIsland(chart)}</script>` +
      `<script src="${escapeHtml(base)}/assets/uPlot.iife.min.js"></script>` +
      `<script src="${escapeHtml(base)}/assets/console-chart.js"></script>`
    : '';
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)} · MCP console</title>` +
    `<link rel="icon" type="image/svg+xml" href="${escapeHtml(CONSOLE_ICON)}">` +
    `<link rel="stylesheet" href="${escapeHtml(base)}/assets/console.css">${chartHead}</head><body>` +
    `<header><h1>MCP console</h1><nav>` +
    link('overview', base || '/', 'Overview') +
    link('sessions', `${base}/sessions`, 'Sessions') +
    link('events', `${base}/events`, 'Events') +
    link('tasks', `${base}/tasks`, 'Tasks') +
    `</nav></header><main><h2>${escapeHtml(title)}</h2>${body}</main>${chartTail}</body></html>`
  );
}

function pager(
  base: string,
  page: McpConsolePage<unknown>,
  route: string,
  keep: Record<string, string | undefined>,
  isFirst: boolean,
): string {
  const params = (extra: Record<string, string>) => {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(keep)) if (v !== undefined && v !== '') search.set(k, v);
    for (const [k, v] of Object.entries(extra)) search.set(k, v);
    const text = search.toString();
    return `${base}/${route}${text ? `?${text}` : ''}`;
  };
  const newest = isFirst ? '' : `<a href="${escapeHtml(params({}))}" rel="first">⇤ Newest</a>`;
  const older = page.next
    ? `<a href="${escapeHtml(params({ before: formatCursor(page.next) }))}" rel="next">Older →</a>`
    : '<span class="muted">No older rows</span>';
  return `<div class="pager">${newest}${older}</div>`;
}

function badge(text: string): string {
  return `<span class="badge ${escapeHtml(text)}">${escapeHtml(text)}</span>`;
}

/** The overview: the chart of the last hour and the newest events. */
export function renderOverview(base: string, chart: McpConsoleThroughput, latest: readonly McpConsoleEvent[]): string {
  const total = chart.count.reduce((a, b) => a + b, 0);
  const failed = chart.errors.reduce((a, b) => a + b, 0);
  const notice = chart.truncated
    ? `<p class="notice">More requests than the chart reads in one hour: it shows the newest ones.</p>`
    : '';
  const body =
    `${notice}<p id="summary">${total} request${total === 1 ? '' : 's'} in the last hour, ${failed} failed.</p>` +
    `<div id="mcp-chart" role="img" aria-label="Requests and failures per minute and p50/p95 latency of the last hour"></div>` +
    `<h2>Latest events</h2>${eventTable(base, latest, 'No events yet.')}<p><a href="${escapeHtml(base)}/events">All events →</a></p>`;
  return layout({ base, title: 'Throughput and latency', current: 'overview', body, chart });
}

/** The sessions page. */
export function renderSessions(
  base: string,
  page: McpConsolePage<McpConsoleSession>,
  isFirst: boolean,
  now: number = Date.now(),
): string {
  const rows = page.rows
    .map(
      (s) =>
        `<tr data-session="${escapeHtml(s.id)}"><td>${escapeHtml(s.principalLabel)}${s.principalLabel !== s.principalKey ? ` <span class="muted">(${escapeHtml(s.principalKey)})</span>` : ''}</td>` +
        `<td>${escapeHtml(s.clientName ?? '')}${s.clientVersion ? ` <span class="muted">${escapeHtml(s.clientVersion)}</span>` : ''}</td>` +
        `<td><code>${escapeHtml(s.protocolVersion)}</code></td>` +
        `<td>${escapeHtml(s.mount)}</td>` +
        `<td title="${escapeHtml(formatTime(s.createdAt))}">${escapeHtml(formatAge(now - s.createdAt.getTime()))}</td>` +
        `<td title="${escapeHtml(formatTime(s.lastSeenAt))}">${escapeHtml(formatAge(now - s.lastSeenAt.getTime()))} ago</td>` +
        `<td>${badge(s.state)}</td></tr>`,
    )
    .join('');
  const table = page.rows.length
    ? `<table id="sessions"><thead><tr><th>Principal</th><th>Client</th><th>Revision</th><th>Mount</th><th>Age</th><th>Last seen</th><th>State</th></tr></thead><tbody>${rows}</tbody></table>`
    : '<p class="muted">No sessions.</p>';
  return layout({
    base,
    title: 'Sessions',
    current: 'sessions',
    body: table + pager(base, page, 'sessions', {}, isFirst),
  });
}

function filterForm(base: string, filter: McpConsoleEventFilter): string {
  const input = (name: keyof McpConsoleEventFilter, label: string, placeholder: string) =>
    `<label>${label}<input name="${name}" value="${escapeHtml(filter[name])}" placeholder="${escapeHtml(placeholder)}"></label>`;
  const time = (name: 'from' | 'to', label: string) =>
    `<label>${label}<input type="datetime-local" step="1" name="${name}" value="${escapeHtml(filter[name]?.toISOString().slice(0, 19))}"></label>`;
  const option = (value: string, label: string) =>
    `<option value="${value}"${(filter.status ?? '') === value ? ' selected' : ''}>${label}</option>`;
  return (
    `<form class="filters" method="get" action="${escapeHtml(base)}/events">` +
    input('principal', 'Principal', 'principal key') +
    input('method', 'Method', 'tools/call') +
    input('tool', 'Tool', 'tool name') +
    `<label>Status<select name="status">${option('', 'any')}${option('ok', 'ok')}${option('error', 'error')}</select></label>` +
    time('from', 'From (UTC)') +
    time('to', 'To (UTC)') +
    `<button type="submit">Filter</button> <a href="${escapeHtml(base)}/events">Clear</a></form>`
  );
}

/** The query parameters that reproduce a filter (for the pager's links). */
export function filterParams(filter: McpConsoleEventFilter): Record<string, string | undefined> {
  return {
    principal: filter.principal,
    method: filter.method,
    tool: filter.tool,
    status: filter.status,
    from: filter.from?.toISOString(),
    to: filter.to?.toISOString(),
  };
}

function eventTable(base: string, events: readonly McpConsoleEvent[], empty: string): string {
  const rows = events
    .map((e) => {
      const peer = e.direction === 'inbound' ? e.mount : e.server;
      return (
        `<tr data-event="${escapeHtml(e.id)}"><td><a href="${escapeHtml(`${base}/events/${encodeURIComponent(e.id)}`)}">${escapeHtml(formatTime(e.createdAt))}</a></td>` +
        `<td>${escapeHtml(e.direction)}<br><span class="muted">${escapeHtml(peer)}</span></td>` +
        `<td>${escapeHtml(e.principalKey)}</td>` +
        `<td><code>${escapeHtml(e.method ?? e.kind)}</code></td>` +
        `<td class="tool">${escapeHtml(e.tool)}</td>` +
        `<td>${badge(isFailedEvent(e) ? 'error' : 'ok')} <span class="muted">${escapeHtml(e.status)}${e.errorCode !== null ? ` / ${escapeHtml(e.errorCode)}` : ''}</span></td>` +
        `<td class="num">${escapeHtml(e.durationMs)} ms</td>` +
        `<td><details><summary>envelopes</summary><div>request</div><pre>${escapeHtml(envelopeText(e.request, INLINE_ENVELOPE_CHARS))}</pre>` +
        `<div>response</div><pre>${escapeHtml(envelopeText(e.response, INLINE_ENVELOPE_CHARS))}</pre></details></td></tr>`
      );
    })
    .join('');
  return events.length
    ? `<table id="events"><thead><tr><th>Time</th><th>Direction</th><th>Principal</th><th>Method</th><th>Tool</th><th>Status</th><th>Duration</th><th>Envelopes</th></tr></thead><tbody>${rows}</tbody></table>`
    : `<p class="muted">${escapeHtml(empty)}</p>`;
}

/** The events page: the filter form and a page of audit rows, each with its envelopes. */
export function renderEvents(
  base: string,
  page: McpConsolePage<McpConsoleEvent>,
  filter: McpConsoleEventFilter,
  isFirst: boolean,
): string {
  const body =
    filterForm(base, filter) +
    eventTable(base, page.rows, 'No events match.') +
    pager(base, page, 'events', filterParams(filter), isFirst);
  return layout({ base, title: 'Events', current: 'events', body });
}

/** One audit row with its whole envelopes. */
export function renderEventDetail(base: string, e: McpConsoleEvent): string {
  const field = (label: string, value: unknown) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(value)}</dd>`;
  const body =
    `<dl class="fields">` +
    field('Id', e.id) +
    field('Time', formatTime(e.createdAt)) +
    field('Direction', e.direction) +
    field(e.direction === 'inbound' ? 'Mount' : 'Server', e.direction === 'inbound' ? e.mount : e.server) +
    field('Principal', e.principalKey) +
    field('Session row', e.sessionRef) +
    field('Kind', e.kind) +
    field('Method', e.method) +
    field('Tool', e.tool) +
    field('Revision', e.protocolVersion) +
    field('HTTP status', e.status) +
    field('JSON-RPC error code', e.errorCode) +
    field('Tool error (isError)', e.isError ? 'yes' : 'no') +
    field('Duration', `${e.durationMs} ms`) +
    (e.traceId ? field('Trace id', e.traceId) : '') +
    field('Note', e.note) +
    `</dl><h2>Request</h2><pre id="request">${escapeHtml(envelopeText(e.request))}</pre>` +
    `<h2>Response</h2><pre id="response">${escapeHtml(envelopeText(e.response))}</pre>` +
    `<p><a href="${escapeHtml(base)}/events">← Events</a></p>`;
  return layout({ base, title: `Event ${e.id}`, current: 'events', body });
}

/** The tasks page. */
export function renderTasks(base: string, page: McpConsolePage<McpConsoleTask>, isFirst: boolean): string {
  const rows = page.rows
    .map(
      (t) =>
        `<tr data-task="${escapeHtml(t.id)}"><td><code>${escapeHtml(t.id)}</code></td><td>${escapeHtml(t.toolName)}</td><td>${badge(t.status)}</td>` +
        `<td>${escapeHtml(t.principalKey)}</td><td>${escapeHtml(t.mount)}</td><td>${escapeHtml(formatTime(t.createdAt))}</td><td>${escapeHtml(formatTime(t.updatedAt))}</td>` +
        `<td>${escapeHtml(t.statusMessage)}</td></tr>`,
    )
    .join('');
  const table = page.rows.length
    ? `<table id="tasks"><thead><tr><th>Id</th><th>Tool</th><th>Status</th><th>Principal</th><th>Mount</th><th>Created</th><th>Updated</th><th>Status message</th></tr></thead><tbody>${rows}</tbody></table>`
    : '<p class="muted">No tasks.</p>';
  return layout({ base, title: 'Tasks', current: 'tasks', body: table + pager(base, page, 'tasks', {}, isFirst) });
}

/** A page that explains what was wrong with the request (400) or what is missing (404). */
export function renderProblem(
  base: string,
  title: string,
  message: string,
  current: ConsolePageName | null = null,
): string {
  return layout({ base, title, current, body: `<p class="problem">${escapeHtml(message)}</p>` });
}
