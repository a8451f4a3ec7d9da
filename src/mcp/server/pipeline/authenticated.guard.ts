import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { isMcpAnonymous } from './anonymous-principal';
import { getMcpContext } from './mcp-execution-context';

/**
 * The guard behind `public`: on a mount with `anonymous: true`, every handler that is not public
 * runs it first, so the anonymous principal does not find the handler in lists (nor complete or
 * subscribe to it), and a call answers as for an unknown handler, with this guard named in the
 * audit note. Over HTTP the bearer guard answers an anonymous `tools/call` of such a tool with a
 * 401 challenge before it gets here.
 */
export class McpAuthenticatedGuard implements CanActivate {
  /** Lets every principal through but the anonymous one. */
  canActivate(context: ExecutionContext): boolean {
    const mcp = getMcpContext(context);
    return mcp === null || !isMcpAnonymous(mcp.principal);
  }
}
