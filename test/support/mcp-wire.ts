/** Raw Streamable HTTP exchanges for the e2e suites: real fetch, every header under the test's control. */

/** The Accept header a Streamable HTTP client sends on POST. */
export const MCP_ACCEPT = 'application/json, text/event-stream';

/** The protocol revision the suites initialize with. */
export const TEST_PROTOCOL_VERSION = '2025-11-25';

/** What came back from one HTTP exchange. */
export interface WireReply {
  status: number;
  headers: Headers;
  /** The raw body text ('' when empty). */
  text: string;
  /** The body parsed as JSON, or undefined when it was empty or not JSON. */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- wire JSON read by the assertions
}

/** Options of one raw exchange. */
export interface WireOptions {
  /** Bearer token; null sends no Authorization header. */
  token?: string | null;
  sessionId?: string;
  /** Extra or overriding headers (set a header to null to leave it out). */
  headers?: Record<string, string | null>;
}

async function toReply(response: Response): Promise<WireReply> {
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

function buildHeaders(options: WireOptions, defaults: Record<string, string>): Record<string, string> {
  const merged: Record<string, string | null> = { ...defaults };
  const token = options.token === undefined ? 'token-alice' : options.token;
  if (token !== null) merged.Authorization = `Bearer ${token}`;
  if (options.sessionId !== undefined) merged['Mcp-Session-Id'] = options.sessionId;
  Object.assign(merged, options.headers ?? {});
  return Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== null));
}

/** POSTs a body (an object is sent as JSON, a string as is) to an MCP endpoint. */
export async function post(url: string, body: unknown, options: WireOptions = {}): Promise<WireReply> {
  const headers = buildHeaders(options, { 'Content-Type': 'application/json', Accept: MCP_ACCEPT });
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return toReply(response);
}

/** Sends any other method (GET, PUT, PATCH, DELETE...) to an MCP endpoint. */
export async function send(url: string, method: string, options: WireOptions = {}, body?: string): Promise<WireReply> {
  const headers = buildHeaders(options, body === undefined ? {} : { 'Content-Type': 'application/json' });
  const response = await fetch(url, { method, headers, body });
  return toReply(response);
}

/** An `initialize` request. */
export function initializeRequest(id: string | number = 'init-1', clientName = 'wire-test') {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: TEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: clientName, version: '1.0.0' },
    },
  };
}

/** An open session: its id plus the two messages that opened it. */
export interface OpenedSession {
  sessionId: string;
  initialize: WireReply;
  initialized: WireReply;
}

/** Initializes a session the way a client does (initialize, then notifications/initialized). */
export async function openSession(
  url: string,
  token = 'token-alice',
  clientName = 'wire-test',
): Promise<OpenedSession> {
  const initialize = await post(url, initializeRequest('init-1', clientName), { token });
  if (initialize.status !== 200) throw new Error(`initialize answered ${initialize.status}: ${initialize.text}`);
  const sessionId = initialize.headers.get('mcp-session-id');
  if (!sessionId) throw new Error('initialize answered without an Mcp-Session-Id header');
  const initialized = await post(
    url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { token, sessionId, headers: versionHeader() },
  );
  return { sessionId, initialize, initialized };
}

/** The MCP-Protocol-Version header a client sends after initialize. */
export function versionHeader(): Record<string, string> {
  return { 'MCP-Protocol-Version': TEST_PROTOCOL_VERSION };
}

/** A `tools/call` request. */
export function callRequest(id: string | number, name: string, args: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

/**
 * What a client can tell apart in a reply: status, the headers that matter (content type, session
 * id, auth challenge, allow) and the body text. Two replies with equal views are indistinguishable.
 */
export function wireView(reply: WireReply): {
  status: number;
  contentType: string | null;
  sessionId: string | null;
  wwwAuthenticate: string | null;
  allow: string | null;
  body: string;
} {
  return {
    status: reply.status,
    contentType: reply.headers.get('content-type'),
    sessionId: reply.headers.get('mcp-session-id'),
    wwwAuthenticate: reply.headers.get('www-authenticate'),
    allow: reply.headers.get('allow'),
    body: reply.text,
  };
}
