// Prelude "stand-ins": what the surrounding text of an example assumes (an authorizer, DTO
// classes, services, a running app), declared only. Its imports are namespaces of names no example
// uses, so an example may import whatever it needs itself.
import type * as snippetMcp from 'durable-mcp';
import type * as snippetTransports from 'durable-mcp/transports';
import type * as snippetNest from '@nestjs/common';

/** An authorizer class of the host's. */
declare class MyAuthorizer implements snippetMcp.McpAuthorizer {
  authorize(token: string): snippetMcp.McpAuthResult;
}
/** DTO classes of the host's tools. */
declare class ImportInput {
  path: string;
}
declare class ReportInput {
  steps: number;
}
declare class BookingInput {
  room: string;
}
declare class PurgeInput {
  key: string;
}
declare class CityInput {
  city: string;
}
/** A form elicitation's schema. */
declare const NameSchema: { type: 'object'; properties: { name: { type: 'string' } }; required: ['name'] };
/** The servers of the client's options, a database URL, a running app. */
declare const servers: snippetMcp.McpClientModuleOptions['servers'];
declare const url: string;
declare const app: snippetNest.INestApplication;
/** The host's users, for the resource examples. */
declare const users: { ids(): string[]; find(id: string): { id: string; name: string } | undefined };
/** An interceptor and a pipe of the host's. */
declare class TimingInterceptor implements snippetNest.NestInterceptor {
  intercept(context: snippetNest.ExecutionContext, next: snippetNest.CallHandler): any;
}
declare class TrimPipe implements snippetNest.PipeTransform {
  transform(value: unknown): unknown;
}
/** Guards of the host's. */
declare class OpsGuard implements snippetNest.CanActivate {
  canActivate(context: snippetNest.ExecutionContext): boolean;
}
declare class TenantConsoleGuard implements snippetNest.CanActivate {
  canActivate(context: snippetNest.ExecutionContext): boolean;
}
/** Authorizers and toolsets of two mounts; @nestjs/config's module and service (not a dependency here). */
declare const auth: snippetMcp.McpAuthorizeFn;
declare const publicAuth: snippetMcp.McpAuthorizeFn;
declare function adminAuth(config: ConfigService): snippetMcp.McpAuthorizeFn;
declare class PublicTools {}
declare class AdminTools {}
declare class MyTools {}
declare class ConfigModule {}
declare class ConfigService {
  get<T = string>(key: string): T | undefined;
}
/** The client, and what the examples of calls pass to it. */
declare const client: snippetMcp.McpClientService;
declare const site: string;
declare const bar: { update(progress: number, total?: number, message?: string): void };
/** A WebSocket transport of the host's, and a model to sample with. */
declare const MyWebSocketTransport: new (
  url: string,
  clientCapabilities: Record<string, unknown>,
) => snippetTransports.McpTransport;
declare const myModel: {
  run(
    params: Record<string, unknown>,
  ): Promise<{ role: 'assistant'; content: { type: 'text'; text: string }; model: string }>;
};
