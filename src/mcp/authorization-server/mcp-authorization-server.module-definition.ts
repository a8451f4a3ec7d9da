import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { McpAuthorizationServerModuleOptions } from './authorization-server.options';

/**
 * The generated `forRoot` / `forRootAsync` of `McpAuthorizationServerModule`. Nothing of its
 * options shapes the module graph (the server is mounted on the HTTP server at boot, not as a
 * controller), so every option may come from the async factory.
 */
export const {
  ConfigurableModuleClass: McpAuthorizationServerConfigurableModule,
  MODULE_OPTIONS_TOKEN: MCP_AUTHORIZATION_SERVER_RAW_OPTIONS,
} = new ConfigurableModuleBuilder<McpAuthorizationServerModuleOptions>()
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createMcpAuthorizationServerOptions')
  .build();
