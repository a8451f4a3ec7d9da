import { Module, type DynamicModule } from '@nestjs/common';
import { MCP_GATEWAY_OPTIONS } from './mcp-gateway.constants';
import { resolveGatewayOptions, type McpGatewayModuleOptions } from './mcp-gateway.options';
import { McpGateway } from './mcp-gateway.service';

/**
 * A gateway: one mount of `McpModule` re-serves the tools, prompts and resources of servers
 * declared in `McpClientModule`, so one endpoint (one authorization, one audit trail) fronts
 * many servers. Import it next to both modules:
 *
 * ```ts
 * imports: [
 *   McpModule.forRoot({ auth }),
 *   McpClientModule.forRoot({ servers: { everything: { transport: 'stdio', command: 'npx', args: ['@modelcontextprotocol/server-everything'] } } }),
 *   McpGatewayModule.forRoot({ upstreams: [{ server: 'everything', prefix: 'ev_', deny: ['*Env*'] }] }),
 * ]
 * ```
 */
@Module({})
export class McpGatewayModule {
  /** Re-serves the upstreams on the mount (`mount`, the default one unless named). */
  static forRoot(options: McpGatewayModuleOptions): DynamicModule {
    const resolved = resolveGatewayOptions(options);
    return {
      module: McpGatewayModule,
      providers: [{ provide: MCP_GATEWAY_OPTIONS, useValue: resolved }, McpGateway],
      exports: [McpGateway],
    };
  }
}
