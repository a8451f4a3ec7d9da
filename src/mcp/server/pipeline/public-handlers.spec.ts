import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_ANONYMOUS_PRINCIPAL, isMcpAnonymous } from './anonymous-principal';
import { McpAuthenticatedGuard } from './authenticated.guard';
import { MCP_CONTEXT_TYPE, type McpExecutionInfo } from './mcp-execution-context';
import { builtInGuards, checkedPublic } from './public-handlers';

function mcpContext(principal: McpPrincipal): ExecutionContextHost {
  const info: McpExecutionInfo = {
    phase: 'list',
    method: 'tools/list',
    kind: 'tool',
    name: 'ledger',
    principal,
    sessionId: null,
    protocolVersion: '2025-11-25',
  };
  const host = new ExecutionContextHost([undefined, undefined, info]);
  host.setType(MCP_CONTEXT_TYPE);
  return host;
}

describe('public handlers', () => {
  const ada: McpPrincipal = { key: 'ada', label: 'Ada', raw: null, scopes: [], roles: [] };

  it('refuses the anonymous principal only, and lets contexts other than MCP through', () => {
    const guard = new McpAuthenticatedGuard();
    expect(guard.canActivate(mcpContext(MCP_ANONYMOUS_PRINCIPAL))).toBe(false);
    expect(guard.canActivate(mcpContext({ key: 'anonymous', label: 'someone', raw: {} }))).toBe(false);
    expect(guard.canActivate(mcpContext(ada))).toBe(true);
    expect(guard.canActivate(new ExecutionContextHost([{}, {}]))).toBe(true);
  });

  it('gives the built-in guard to the handlers that are not public, on anonymous mounts only', () => {
    expect(builtInGuards(true, false).map((guard) => guard.constructor.name)).toEqual(['McpAuthenticatedGuard']);
    expect(builtInGuards(true, true)).toEqual([]);
    expect(builtInGuards(false, false)).toEqual([]);
    expect(builtInGuards(false, true)).toEqual([]);
  });

  it('reads public as false when absent and refuses anything but a boolean', () => {
    expect(checkedPublic('@McpTool', 'T#m', undefined)).toBe(false);
    expect(checkedPublic('@McpTool', 'T#m', true)).toBe(true);
    expect(checkedPublic('@McpTool', 'T#m', false)).toBe(false);
    expect(() => checkedPublic('@McpResource', 'T#m', 1)).toThrow(
      new McpConfigurationError('@McpResource on T#m: public must be true or false, got 1.'),
    );
  });

  it('knows the anonymous principal by its key, which has no scopes and no roles', () => {
    expect(MCP_ANONYMOUS_PRINCIPAL).toEqual({ key: 'anonymous', label: 'anonymous', raw: null, scopes: [], roles: [] });
    expect(Object.isFrozen(MCP_ANONYMOUS_PRINCIPAL)).toBe(true);
    expect(isMcpAnonymous(MCP_ANONYMOUS_PRINCIPAL)).toBe(true);
    expect(isMcpAnonymous(ada)).toBe(false);
    expect(isMcpAnonymous(undefined)).toBe(false);
  });
});
