import type { JsonRpcNotification, JsonRpcRequest } from '../../protocol/jsonrpc';
import { StatelessErrorCode } from '../../protocol/stateless';
import { checkRoutingHeaders } from './stateless-headers';

const VERSION = '2026-07-28';
const headers = (values: Record<string, string>) => (name: string) => values[name.toLowerCase()];
const request = (method: string, params?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 1,
  method,
  params,
});
const mismatch = (message: string) => ({
  status: 400,
  code: StatelessErrorCode.HeaderMismatch,
  message: `Header mismatch: ${message}`,
});
const base64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

describe('checkRoutingHeaders', () => {
  const routed = (extra: Record<string, string> = {}) => headers({ 'mcp-protocol-version': VERSION, ...extra });

  it('requires MCP-Protocol-Version to be present and to match the body revision', () => {
    expect(checkRoutingHeaders(request('tools/list'), VERSION, headers({}))).toEqual(
      mismatch('the MCP-Protocol-Version header is required'),
    );
    expect(checkRoutingHeaders(request('tools/list'), VERSION, headers({ 'mcp-protocol-version': '  ' }))).toEqual(
      mismatch('the MCP-Protocol-Version header is required'),
    );
    expect(
      checkRoutingHeaders(request('tools/list'), VERSION, headers({ 'mcp-protocol-version': '2025-11-25' })),
    ).toEqual(mismatch(`MCP-Protocol-Version header value '2025-11-25' does not match body value '${VERSION}'`));
  });

  it('asks nothing more of a notification', () => {
    const notification: JsonRpcNotification = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 1 },
    };
    expect(checkRoutingHeaders(notification, VERSION, routed())).toBeNull();
  });

  it('requires Mcp-Method to be present, well formed and equal to the body method', () => {
    expect(checkRoutingHeaders(request('tools/list'), VERSION, routed())).toEqual(
      mismatch('the Mcp-Method header is required'),
    );
    expect(checkRoutingHeaders(request('tools/list'), VERSION, routed({ 'mcp-method': '=?base64?abc?=' }))).toEqual(
      mismatch('the Mcp-Method header value is malformed'),
    );
    expect(checkRoutingHeaders(request('tools/list'), VERSION, routed({ 'mcp-method': 'prompts/list' }))).toEqual(
      mismatch(`Mcp-Method header value 'prompts/list' does not match body value 'tools/list'`),
    );
    expect(
      checkRoutingHeaders(request('tools/list'), VERSION, routed({ 'mcp-method': ` ${base64('tools/list')} ` })),
    ).toBeNull();
  });

  it('requires Mcp-Name for a method named by its params, and compares it decoded', () => {
    const call = request('tools/call', { name: 'héllo', arguments: {} });
    const method = { 'mcp-method': 'tools/call' };
    expect(checkRoutingHeaders(call, VERSION, routed(method))).toEqual(
      mismatch('the Mcp-Name header is required for tools/call'),
    );
    expect(checkRoutingHeaders(call, VERSION, routed({ ...method, 'mcp-name': '=?base64?%%%%?=' }))).toEqual(
      mismatch('the Mcp-Name header value is malformed'),
    );
    expect(checkRoutingHeaders(call, VERSION, routed({ ...method, 'mcp-name': 'other' }))).toEqual(
      mismatch(`Mcp-Name header value 'other' does not match body value 'héllo'`),
    );
    expect(checkRoutingHeaders(call, VERSION, routed({ ...method, 'mcp-name': base64('héllo') }))).toBeNull();
    expect(
      checkRoutingHeaders(
        request('resources/read', { uri: 'docs://a' }),
        VERSION,
        routed({ 'mcp-method': 'resources/read', 'mcp-name': 'docs://a' }),
      ),
    ).toBeNull();
  });

  it('lets a method without a name go without Mcp-Name, but refuses a malformed one sent anyway', () => {
    const list = request('tools/list');
    expect(checkRoutingHeaders(list, VERSION, routed({ 'mcp-method': 'tools/list' }))).toBeNull();
    expect(
      checkRoutingHeaders(list, VERSION, routed({ 'mcp-method': 'tools/list', 'mcp-name': 'anything' })),
    ).toBeNull();
    expect(
      checkRoutingHeaders(list, VERSION, routed({ 'mcp-method': 'tools/list', 'mcp-name': '=?base64?abc?=' })),
    ).toEqual(mismatch('the Mcp-Name header value is malformed'));
    const nameless = request('tools/call', { arguments: {} });
    expect(checkRoutingHeaders(nameless, VERSION, routed({ 'mcp-method': 'tools/call' }))).toBeNull();
    expect(checkRoutingHeaders(request('vendor/thing'), VERSION, routed({ 'mcp-method': 'vendor/thing' }))).toBeNull();
  });
});
