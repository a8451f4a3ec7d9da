import { Controller, Get, Query, Res, type Type } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { McpOAuthClientError } from '../oauth-client.errors';
import { McpOAuthService, type McpAuthorizationCallbackQuery } from './mcp-oauth.service';

/**
 * The callback route of `authorizationCode` at `path` (`oauthCallbackPath`): completes the
 * authorization, then sends the user where the app asked (302) or answers a short page. An
 * authorization it cannot complete answers 400 with the reason (never a code or token).
 * Works on Express and Fastify (through the adapter).
 */
export function createOAuthCallbackController(path: string): Type<unknown> {
  @Controller(path)
  class McpOAuthCallbackController {
    constructor(
      private readonly oauth: McpOAuthService,
      private readonly host: HttpAdapterHost,
    ) {}

    @Get()
    async callback(@Query() query: McpAuthorizationCallbackQuery, @Res() response: object): Promise<void> {
      const adapter = this.host.httpAdapter;
      let answer: { status: number; text: string; location?: string };
      try {
        const done = await this.oauth.completeAuthorization(query);
        answer = done.redirectAfter
          ? { status: 302, text: '', location: done.redirectAfter }
          : { status: 200, text: 'Authorization complete: you can close this window.' };
      } catch (error) {
        if (!(error instanceof McpOAuthClientError)) throw error;
        answer = { status: 400, text: `Authorization failed: ${error.message}` };
      }
      adapter.setHeader(response, 'Cache-Control', 'no-store');
      if (answer.location) return void adapter.redirect(response, 302, answer.location);
      adapter.setHeader(response, 'Content-Type', 'text/plain; charset=utf-8');
      adapter.reply(response, answer.text, answer.status);
    }
  }
  return McpOAuthCallbackController;
}
