import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { McpClientModuleExtras, McpClientOptions } from './interfaces/mcp-client-options.interface';

/**
 * The generated `forRoot` / `forRootAsync` of `McpClientModule`. Extras (`isGlobal`, `transports`, `stores`)
 * shape the module graph and are therefore synchronous, also with `forRootAsync`.
 */
export const { ConfigurableModuleClass: McpClientConfigurableModule, MODULE_OPTIONS_TOKEN: MCP_CLIENT_RAW_OPTIONS } =
  new ConfigurableModuleBuilder<McpClientOptions>()
    .setClassMethodName('forRoot')
    .setFactoryMethodName('createMcpClientOptions')
    .setExtras<McpClientModuleExtras>(
      {
        isGlobal: false,
        transports: undefined,
        stores: undefined,
        oauthCallbackPath: undefined,
        oauthClientMetadataPath: undefined,
      },
      (definition, extras) => ({
        ...definition,
        global: extras.isGlobal ?? false,
      }),
    )
    .build();
