import { Client as Sdk2Client, StreamableHTTPClientTransport as Sdk2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** The part of a `tools/call` result the suites read. */
export type ToolResult = {
  content: Array<{ type: string; text: string }>;
  structuredContent?: unknown;
  isError?: boolean;
};

/** An official SDK client connected at one revision. */
export interface RevisionClient {
  client: Client | Sdk2Client;
  /** The session id of the SDK 1.x transport (2025-11-25); undefined on SDK 2. */
  sessionId: string | undefined;
}

/**
 * Connects an official SDK client to the MCP endpoint at `url` as alice over Streamable HTTP:
 * SDK 1.x for 2025-11-25, SDK 2 pinned to `revision` otherwise. Checks that the transport
 * negotiated `revision`.
 */
export async function connectAtRevision(url: URL, revision: string, name: string): Promise<RevisionClient> {
  const headers = { Authorization: 'Bearer token-alice' };
  if (revision === '2025-11-25') {
    const client = new Client({ name, version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
    await client.connect(transport);
    expect(transport.protocolVersion).toBe(revision);
    return { client, sessionId: transport.sessionId };
  }
  const client = new Sdk2Client({ name, version: '2.0.0' }, { versionNegotiation: { mode: { pin: revision } } });
  const transport = new Sdk2Transport(url, { requestInit: { headers } });
  await client.connect(transport);
  expect(transport.protocolVersion).toBe(revision);
  return { client, sessionId: undefined };
}

/**
 * Calls a tool and keeps the fields of its result a tool decides (the stateless revision adds the
 * server's `_meta`), as plain JSON.
 */
export async function toolResultOf(
  client: { callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown> },
  name: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  const { content, structuredContent, isError } = (await client.callTool({ name, arguments: args })) as ToolResult;
  return JSON.parse(JSON.stringify({ content, structuredContent, isError })) as ToolResult;
}
