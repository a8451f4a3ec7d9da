import { Inject, Injectable, type CanActivate, type ExecutionContext, type Type } from '@nestjs/common';
import type { Request } from 'express';
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
import { TOKEN_REJECTED, type McpBearerStrategyLike, type McpBearerVerdict } from './mcp-bearer.strategy';
import { isMcpAnonymous } from '../pipeline/anonymous-principal';
import { missingScopes } from '../pipeline/missing-scopes';
import { peekRequest } from './request-peek';

/**
 * Creates the guard of one mount: its bearer strategy (`strategy`, the mount's provider), no
 * session, 401 on any failure. The guard asks the strategy for its verdict directly rather than
 * through Passport's `authenticate` middleware, which allocates a strategy object and its
 * callbacks on every request; the strategy stays registered with Passport for anyone who runs it
 * there. The outcome is the one `AuthGuard` gives: `req.user` (and `req.authInfo`) set, the error
 * or refusal thrown. With the
 * `oauth` option the 401 names the resource metadata (and `invalid_token` for a rejected token),
 * and a principal without the mount's required scopes gets 403 `insufficient_scope`; so does a
 * `tools/call` of a tool whose `scopes` the principal lacks (the client may step up). With the
 * `anonymous` option a request without a token passes as the anonymous principal, which the
 * required scopes do not apply to; its `tools/call` of a tool that is not public gets the 401 of
 * a request without a token (the client may sign in).
 */
export function createMcpAuthGuard(strategy: Type<McpBearerStrategyLike>): Type<CanActivate> {
  @Injectable()
  class McpAuthGuard implements CanActivate {
    constructor(
      @Inject(MCP_MODULE_OPTIONS) private readonly mcpOptions: McpResolvedOptions,
      private readonly toolset: Toolset,
      @Inject(strategy) private readonly bearer: McpBearerStrategyLike,
    ) {}

    canActivate(context: ExecutionContext): boolean | Promise<boolean> {
      const req = context.switchToHttp().getRequest<McpRequest & { authInfo?: unknown }>();
      // The authorizer's error propagates as it came, as it did through Passport. A synchronous
      // authorizer's request passes without a promise (Nest awaits only a guard's promise).
      const verdict = this.bearer.verdictOf(req as unknown as Request);
      if (verdict instanceof Promise) return verdict.then((settled) => this.admit(req, settled, context));
      return this.admit(req, verdict, context);
    }

    /** Sets the request's principal from the verdict, or throws the refusal (401, 403). */
    private admit(
      req: McpRequest & { authInfo?: unknown },
      verdict: McpBearerVerdict,
      context: ExecutionContext,
    ): true {
      req.authInfo = verdict.challenge;
      req.user = this.handleRequest(null, verdict.principal, verdict.challenge, context);
      if (this.admitsAnonymous(req.user)) this.checkPublicCall(req);
      else if (this.toolset.hasScopedTools) this.checkToolScopes(req);
      return true;
    }

    /** Turns the strategy's verdict into the principal, or throws the refusal (`AuthGuard`'s hook, kept as such). */
    handleRequest<TUser>(error: unknown, user: TUser | false, info: unknown, context: ExecutionContext): TUser {
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
