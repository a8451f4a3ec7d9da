import type { McpEventInput } from '../../src/mcp/persistence/interfaces/mcp-event-sink.interface';

/**
 * The audit row a `tools/call` of `echo` with the text `hello <i>` leaves, created now (today's
 * partition), called by `principalKey`.
 */
export function echoCallEvent(i: number, principalKey: string): McpEventInput {
  return {
    createdAt: new Date(),
    direction: 'inbound',
    mount: 'default',
    sessionRef: '6f1c1f2e-6d8e-4d3c-9a55-0b7f0d1c2e3f',
    principalKey,
    kind: 'request',
    method: 'tools/call',
    protocolVersion: '2025-11-25',
    request: {
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: `hello ${i}` } },
    },
    response: { jsonrpc: '2.0', id: i, result: { content: [{ type: 'text', text: `hello ${i}` }] } },
    status: 200,
    durationMs: 1,
  };
}
