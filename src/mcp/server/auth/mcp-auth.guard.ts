import { Inject, Injectable, type CanActivate, type ExecutionContext, type Type } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpRequest } from '../http/mcp-body-reader';
import type { McpResolvedOptions } from '../config/mcp.options';
import {
  insufficientScopeChallenge,
  McpBearerChallengeException,
  McpInsufficientScopeException,
  unauthorizedChallenge,
} from '../oauth/bearer-challenge';
import { Toolset } from '../dispatch/toolset';
import { mcpStrategyName, TOKEN_REJECTED } from './mcp-bearer.strategy';
import { isMcpAnonymous } from '../pipeline/anonymous-principal';
import { missingScopes } from '../pipeline/missing-scopes';
import { peekRequest } from './request-peek';

/**
 * Creates the guard of one mount: its bearer strategy, no session, 401 on any failure. With the
 * `oauth` option the 401 names the resource metadata (and `invalid_token` for a rejected token),
 * and a principal without the mount's required scopes gets 403 `insufficient_scope`; so does a
 * `tools/call` of a tool whose `scopes` the principal lacks (the client may step up). With the
 * `anonymous` option a request without a token passes as the anonymous principal, which the
 * required scopes do not apply to; its `tools/call` of a tool that is not public gets the 401 of
 * a request without a token (the client may sign in).
 */
export function createMcpAuthGuard(mount: string): Type<CanActivate> {
  @Injectable()
  class McpAuthGuard extends AuthGuard(mcpStrategyName(mount)) {
    constructor(
      @Inject(MCP_MODULE_OPTIONS) private readonly mcpOptions: McpResolvedOptions,
      private readonly toolset: Toolset,
    ) {
      super();
    }

    override async canActivate(context: ExecutionContext): Promise<boolean> {
      const allowed = (await super.canActivate(context)) as boolean;
      if (!allowed) return allowed;
      const req = context.switchToHttp().getRequest<McpRequest>();
      if (this.admitsAnonymous(req.user)) this.checkPublicCall(req);
      else if (this.toolset.hasScopedTools) this.checkToolScopes(req);
      return allowed;
    }

    override handleRequest<TUser>(
      error: unknown,
      user: TUser | false,
      info: unknown,
      context: ExecutionContext,
    ): TUser {
      // Passport's error, forwarded as it came.
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- not ours to wrap
      if (error) throw error;
      const oauth = this.mcpOptions.oauth;
      if (!user)
        throw new McpBearerChallengeException(
          unauthorizedChallenge(oauth, info === TOKEN_REJECTED ? 'invalid' : 'missing'),
        );
      if (
        oauth &&
        !this.admitsAnonymous(user) &&
        missingScopes(oauth.requiredScopes, user as unknown as McpPrincipal).length > 0
      ) {
        const id = peekRequest(context.switchToHttp().getRequest<McpRequest>())?.id ?? null;
        throw new McpInsufficientScopeException(
          insufficientScopeChallenge(oauth, oauth.requiredScopes),
          oauth.requiredScopes,
          id,
        );
      }
      return user;
    }

    /** True for the anonymous principal on a mount that admits it (elsewhere the key means nothing special). */
    private admitsAnonymous(user: unknown): boolean {
      return this.mcpOptions.anonymous && isMcpAnonymous(user as McpPrincipal | undefined);
    }

    /**
     * 401 for the anonymous principal's call of a tool that is not public, with the challenge of
     * a request without a token. A tool that does not exist answers the same, so the anonymous
     * principal cannot tell which tools exist beyond the public ones.
     */
    private checkPublicCall(req: McpRequest): void {
      const tool = peekRequest(req)?.tool;
      if (tool === undefined || this.toolset.get(tool)?.public === true) return;
      throw new McpBearerChallengeException(unauthorizedChallenge(this.mcpOptions.oauth, 'missing'));
    }

    /** 403 for a call of a scoped tool the caller lacks scopes for; the challenge asks for the mount's and the tool's. */
    private checkToolScopes(req: McpRequest): void {
      const peeked = peekRequest(req);
      const tool = peeked?.tool === undefined ? undefined : this.toolset.get(peeked.tool);
      const scopes = tool?.scopes ?? [];
      if (missingScopes(scopes, req.user as McpPrincipal).length === 0) return;
      const needed = [...new Set([...(this.mcpOptions.oauth?.requiredScopes ?? []), ...scopes])];
      throw new McpInsufficientScopeException(
        insufficientScopeChallenge(this.mcpOptions.oauth, needed),
        needed,
        peeked?.id ?? null,
      );
    }
  }
  return McpAuthGuard;
}
