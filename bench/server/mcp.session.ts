/** The protocol revision the benchmark asks for in `initialize`. */
export const BENCH_PROTOCOL_VERSION = '2025-11-25';

/** A session opened on one target: what every benchmark request must carry. */
export interface McpBenchSession {
  sessionId: string;
  protocolVersion: string;
  /** Headers of a `tools/call` POST in this session. */
  headers: Record<string, string>;
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
  return { sessionId, protocolVersion, headers, poweredBy: init.headers.get('x-powered-by') };
}
