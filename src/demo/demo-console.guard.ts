import {
  ForbiddenException,
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
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
 * Who may read the example app's console at /mcp-console (and its readiness details): a console
 * administrator, a principal named in MCP_CONSOLE_ADMINS, with its token of MCP_TOKENS (or the
 * generated demo token, principal `demo`), sent as `Authorization: Bearer <token>` or as the
 * password of Basic credentials (any user name), so a browser can sign in with its own login
 * prompt. Never a token in the URL. No token, or one the app does not know, answers 401 with a
 * Basic challenge; the token of a principal that is not an administrator answers 403: an MCP
 * token alone never opens the audit trail of the others.
 */
@Injectable()
export class DemoConsoleGuard implements CanActivate {
  /** @inheritdoc */
  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const verdict = consoleAdmission(
      http.getRequest<HeaderRequest>().headers.authorization,
      demoConfig.tokens,
      demoConfig.consoleAdmins,
    );
    if (verdict === 'admin') return true;
    if (verdict === 'unknown') {
      http.getResponse<HeaderReply>().header('WWW-Authenticate', 'Basic realm="mcp-console", charset="UTF-8"');
      throw new UnauthorizedException(
        'The console needs the token of a console administrator: Authorization: Bearer <token>, or Basic credentials with the token as password.',
      );
    }
    throw new ForbiddenException(
      demoConfig.consoleAdmins.size
        ? 'This principal is not a console administrator (MCP_CONSOLE_ADMINS).'
        : 'The console admits nobody: MCP_CONSOLE_ADMINS names no administrator.',
    );
  }
}

/**
 * What the console makes of an `Authorization` header: `admin` (the token of a principal in
 * `admins`), `not-admin` (a known token of another principal) or `unknown` (no token, or one
 * that is not in `tokens`).
 */
export function consoleAdmission(
  header: string | string[] | undefined,
  tokens: ReadonlyMap<string, string>,
  admins: ReadonlySet<string>,
): 'admin' | 'not-admin' | 'unknown' {
  const token = tokenOf(header);
  const principal = token === undefined ? undefined : tokens.get(token);
  if (principal === undefined) return 'unknown';
  return admins.has(principal) ? 'admin' : 'not-admin';
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
