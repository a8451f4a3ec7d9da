import { Injectable, type ExecutionContext } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import { getMcpContext, type McpExecutionInfo } from '../mcp';

/**
 * `@nestjs/throttler` as a tool guard: each MCP principal has its own budget (not each IP, which
 * many callers may share), listing tools does not spend it, and no rate-limit headers are set
 * (a tool call's answer is an MCP result, not an HTTP response of its own).
 */
@Injectable()
export class DemoThrottlerGuard extends ThrottlerGuard {
  /** Counts calls only: a `tools/list` runs the guard too, to decide whether to list the tool. */
  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    const mcp = getMcpContext(context);
    return mcp !== null && mcp.phase !== 'call';
  }

  /** Gives the throttler the MCP call info as its "request", and a response with no `header()` so it sets no headers. */
  protected override getRequestResponse(context: ExecutionContext) {
    const mcp = getMcpContext(context);
    return mcp
      ? { req: mcp as unknown as Record<string, unknown>, res: {} as Record<string, unknown> }
      : super.getRequestResponse(context);
  }

  /** Keys the budget by principal. */
  protected override async getTracker(req: Record<string, unknown>): Promise<string> {
    const principal = (req as unknown as McpExecutionInfo).principal;
    return principal ? `principal:${principal.key}` : super.getTracker(req);
  }
}
