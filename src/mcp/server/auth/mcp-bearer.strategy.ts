import { Inject, Injectable, type OnModuleInit, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-http-bearer';
import type { McpAuthorizeFn, McpAuthorizer, McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../mcp.options';
import { normalizePrincipal } from './principal-normalizer';

/** Name of the Passport strategy that guards a mount. */
export function mcpStrategyName(mount: string): string {
  return `mcp-bearer:${mount}`;
}

function isAuthorizerClass(auth: unknown): auth is Type<McpAuthorizer> {
  return typeof auth === 'function' && typeof (auth as Type<McpAuthorizer>).prototype?.authorize === 'function';
}

/**
 * Creates the Passport bearer strategy of one mount. It hands the token to the configured
 * authorizer (a function, or a class resolved through DI) and normalizes the principal.
 */
export function createMcpBearerStrategy(mount: string): Type<unknown> {
  @Injectable()
  class McpBearerStrategy extends PassportStrategy(Strategy, mcpStrategyName(mount)) implements OnModuleInit {
    private authorize: McpAuthorizeFn;

    constructor(
      @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
      private readonly moduleRef: ModuleRef,
    ) {
      super({ passReqToCallback: true });
    }

    /** Resolves a class authorizer at boot, so a missing dependency fails the app, not a request. */
    async onModuleInit(): Promise<void> {
      const auth = this.options.auth;
      if (!isAuthorizerClass(auth)) {
        this.authorize = auth as McpAuthorizeFn;
        return;
      }
      let instance: McpAuthorizer;
      try {
        instance = this.moduleRef.get(auth, { strict: false });
      } catch {
        instance = await this.moduleRef.create(auth);
      }
      this.authorize = (token, request) => instance.authorize(token, request);
    }

    async validate(request: Request, token: string): Promise<McpPrincipal | false> {
      return normalizePrincipal(await this.authorize(token, request)) ?? false;
    }
  }
  return McpBearerStrategy;
}
