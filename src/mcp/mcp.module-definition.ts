import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { McpModuleExtras, McpModuleOptions } from './server/interfaces/mcp-module-options.interface';
import { DEFAULT_MOUNT, DEFAULT_PATH } from './mcp.constants';

/**
 * The generated `forRoot` / `forRootAsync` of `McpModule`. Extras (mount, path, isGlobal, stores) shape
 * the module graph and are therefore synchronous, also with `forRootAsync`.
 */
export const { ConfigurableModuleClass: McpConfigurableModule, MODULE_OPTIONS_TOKEN: MCP_RAW_OPTIONS } =
  new ConfigurableModuleBuilder<McpModuleOptions>()
    .setClassMethodName('forRoot')
    .setFactoryMethodName('createMcpOptions')
    .setExtras<McpModuleExtras>(
      { mount: DEFAULT_MOUNT, path: DEFAULT_PATH, isGlobal: false, stores: undefined },
      (definition, extras) => ({
        ...definition,
        global: extras.isGlobal,
      }),
    )
    .build();
