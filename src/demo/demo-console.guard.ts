import { Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { demoConfig } from './demo.config';

/** What Express's request and Fastify's request both offer. */
interface HeaderRequest {
  headers: Record<string, string | string[] | undefined>;
}

/** What Express's response and Fastify's reply both offer. */
interface HeaderReply {
  header(name: string, value: string): unknown;
}

/**
 * Who may read the example app's console at /mcp-console: a caller with a token of MCP_TOKENS
 * (or the generated demo token), sent as `Authorization: Bearer <token>` or as the password of
 * Basic credentials (any user name), so a browser can sign in with its own login prompt. Never
 * a token in the URL. A refusal answers 401 with a Basic challenge.
 */
@Injectable()
export class DemoConsoleGuard implements CanActivate {
  /** @inheritdoc */
  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const token = tokenOf(http.getRequest<HeaderRequest>().headers.authorization);
    if (token !== undefined && demoConfig.tokens.has(token)) return true;
    http.getResponse<HeaderReply>().header('WWW-Authenticate', 'Basic realm="mcp-console", charset="UTF-8"');
    throw new UnauthorizedException('The console needs a token of MCP_TOKENS: Authorization: Bearer <token>, or Basic credentials with the token as password.');
  }
}

/** The token of a Bearer or Basic `Authorization` header, or undefined. */
export function tokenOf(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const [scheme, value] = header.trim().split(/\s+/, 2);
  if (!value) return undefined;
  if (scheme.toLowerCase() === 'bearer') return value;
  if (scheme.toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}
