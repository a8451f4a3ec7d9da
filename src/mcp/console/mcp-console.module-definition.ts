import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_CONSOLE_PATH, type McpConsoleModuleExtras, type McpConsoleOptions } from './mcp-console.options';

/**
 * The generated `forRoot` / `forRootAsync` of `McpConsoleModule`. The extras (`path`, `guard`)
 * shape the routes and are therefore synchronous, also with `forRootAsync`.
 */
export const { ConfigurableModuleClass: McpConsoleConfigurableModule, MODULE_OPTIONS_TOKEN: MCP_CONSOLE_RAW_OPTIONS } =
  new ConfigurableModuleBuilder<McpConsoleOptions>()
    .setClassMethodName('forRoot')
    .setFactoryMethodName('createMcpConsoleOptions')
    .setExtras<Partial<McpConsoleModuleExtras>>(
      { path: DEFAULT_CONSOLE_PATH, guard: undefined },
      (definition) => definition,
    )
    .build();
