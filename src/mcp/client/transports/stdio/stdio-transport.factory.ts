import { Injectable } from '@nestjs/common';
import { isSupportedSessionVersion } from '../../../protocol/revisions';
import { assertKnownOptions, optionKeys } from '../../../errors/mcp-configuration.errors';
import type {
  McpResolvedStdioServerConfig,
  McpServerCommonConfig,
  McpStdioServerConfig,
} from '../../interfaces/mcp-server-config.interface';
import { STDIO_POOL_OPTION_KEYS } from './stdio-options-resolver';
import type { McpTransportFactory, McpTransportFactoryContext } from '../mcp-transport-factory.interface';
import { assertStdioArgv, toStdioArgv } from './stdio-argv';
import { StdioTransport } from './stdio.transport';

/**
 * Builds `StdioTransport`s for server entries with a `command` (or `transport: 'stdio'`). The
 * command becomes an argv array; a shell command line is refused.
 */
@Injectable()
export class StdioTransportFactory implements McpTransportFactory<McpResolvedStdioServerConfig> {
  /** @inheritdoc */
  readonly transport = 'stdio';
  /** @inheritdoc */
  readonly optionKeys = optionKeys<Omit<McpStdioServerConfig, keyof McpServerCommonConfig | 'transport'>>({
    command: true,
    args: true,
    env: true,
    cwd: true,
    stateless: true,
    pool: true,
    closeGraceMs: true,
    killGraceMs: true,
  });

  /** @inheritdoc */
  resolve(server: string, entry: Record<string, unknown>): McpResolvedStdioServerConfig {
    assertKnownOptions(entry.pool, STDIO_POOL_OPTION_KEYS, `MCP server "${server}": option "pool"`);
    const { args, command, ...rest } = entry;
    let argv: string[];
    if (typeof command === 'string') {
      argv = toStdioArgv({ command, args: args as string[] | undefined });
    } else {
      if (args !== undefined)
        throw new Error(
          '"args" is only allowed with a single-program "command" string; put everything in the argv array',
        );
      assertStdioArgv(command);
      argv = [...command];
    }
    return { ...(rest as object), transport: 'stdio', command: argv };
  }

  /** @inheritdoc */
  create(config: McpResolvedStdioServerConfig, context: McpTransportFactoryContext): StdioTransport {
    return new StdioTransport({
      command: config.command,
      env: config.env,
      cwd: config.cwd,
      stateless: config.stateless,
      pool: config.pool,
      clientCapabilities: context.clientCapabilities,
      ...(isSupportedSessionVersion(config.version) ? { protocolVersion: config.version } : {}),
      ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
      ...(config.closeGraceMs !== undefined ? { closeGraceMs: config.closeGraceMs } : {}),
      ...(config.killGraceMs !== undefined ? { killGraceMs: config.killGraceMs } : {}),
    });
  }

  /** The program: its argv and working directory. */
  endpointKey(config: McpResolvedStdioServerConfig): string {
    return `stdio ${JSON.stringify({ argv: config.command, cwd: config.cwd ?? null })}`;
  }
}
