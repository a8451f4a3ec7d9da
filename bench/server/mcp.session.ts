/** The protocol revision the benchmark asks for in `initialize`. */
export const BENCH_PROTOCOL_VERSION = '2025-11-25';

/** The stateless revision the `ours-stateless` target is driven with. */
export const BENCH_STATELESS_VERSION = '2026-07-28';

/**
 * What every benchmark request to one target must carry: a 2025-11-25 session opened with the
 * handshake, or the per-request envelope of the stateless revision (no session).
 */
export interface McpBenchSession {
  /** The `Mcp-Session-Id`, or null on the stateless revision. */
  sessionId: string | null;
  protocolVersion: string;
  /** Headers of a `tools/call` POST in this session. */
  headers: Record<string, string>;
  /** The `_meta` every `tools/call`'s params carry (the stateless envelope), if any. */
  meta?: Record<string, unknown>;
  /** How many `mcp_events` rows opening it wrote (the handshake, or the stateless probe call). */
  setupRows: number;
  /** The `X-Powered-By` header of the `initialize` answer, if any (Express sends one). */
  poweredBy: string | null;
}

const REQUEST_TIMEOUT_MS = 10_000;

async function post(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/**
 * Opens a 2025-era session the way a client does: `initialize`, then
 * `notifications/initialized` with the session id and negotiated revision. Throws, quoting the
 * server, when either step is refused.
 */
export async function openMcpSession(url: string, token: string): Promise<McpBenchSession> {
  const base = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${token}`,
  };
  const init = await post(url, base, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: BENCH_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'durable-mcp-bench', version: '1.0.0' },
    },
  });
  const sessionId = init.headers.get('mcp-session-id');
  let protocolVersion: unknown;
  try {
    protocolVersion = JSON.parse(init.text)?.result?.protocolVersion;
  } catch {
    protocolVersion = undefined;
  }
  if (init.status !== 200 || !sessionId || typeof protocolVersion !== 'string') {
    throw new Error(
      `initialize was refused: HTTP ${init.status}, Mcp-Session-Id ${sessionId ?? '(none)'}, body ${init.text.slice(0, 300)}`,
    );
  }
  const headers = { ...base, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': protocolVersion };
  const initialized = await post(url, headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (initialized.status !== 202) {
    throw new Error(
      `notifications/initialized was refused: HTTP ${initialized.status}, body ${initialized.text.slice(0, 300)}`,
    );
  }
  return { sessionId, protocolVersion, headers, setupRows: 2, poweredBy: init.headers.get('x-powered-by') };
}

/**
 * Prepares stateless (2026-07-28) calls: no handshake; every `tools/call` carries the revision,
 * the client's info and capabilities in `params._meta` and the routing headers
 * (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`). One probe call checks that the target
 * answers them without a session; throws, quoting the server, when it does not.
 */
export async function openStatelessCalls(url: string, token: string): Promise<McpBenchSession> {
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${token}`,
    'MCP-Protocol-Version': BENCH_STATELESS_VERSION,
    'Mcp-Method': 'tools/call',
    'Mcp-Name': 'echo',
  };
  const meta = {
    'io.modelcontextprotocol/protocolVersion': BENCH_STATELESS_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'durable-mcp-bench', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const probe = await post(url, headers, {
    jsonrpc: '2.0',
    id: 0,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'probe' }, _meta: meta },
  });
  let text: unknown;
  try {
    text = JSON.parse(probe.text)?.result?.content?.[0]?.text;
  } catch {
    text = undefined;
  }
  if (probe.status !== 200 || probe.headers.get('mcp-session-id') || typeof text !== 'string') {
    throw new Error(
      `a stateless tools/call was not answered as one: HTTP ${probe.status}, Mcp-Session-Id ${probe.headers.get('mcp-session-id') ?? '(none)'}, body ${probe.text.slice(0, 300)}`,
    );
  }
  return {
    sessionId: null,
    protocolVersion: BENCH_STATELESS_VERSION,
    headers,
    meta,
    setupRows: 1,
    poweredBy: probe.headers.get('x-powered-by'),
  };
}
