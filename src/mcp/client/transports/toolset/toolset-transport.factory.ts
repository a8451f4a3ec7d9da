import { Injectable } from '@nestjs/common';
import type { McpMessageHandler } from '../../../interfaces/mcp-delivery.interface';
import { DEFAULT_MOUNT, getMcpToolsetToken } from '../../../mcp.constants';
import { optionKeys } from '../../../errors/mcp-configuration.errors';
import type { McpServerCommonConfig, McpToolsetServerConfig } from '../../interfaces/mcp-server-config.interface';
import type { McpTransportFactory, McpTransportFactoryContext } from '../mcp-transport-factory.interface';
import { ToolsetTransport } from './toolset.transport';

/**
 * Builds `ToolsetTransport`s for `transport: 'toolset'` entries: the toolset of a mount of this
 * app (found by its mount name), called in-process as a fixed principal.
 */
@Injectable()
export class ToolsetTransportFactory implements McpTransportFactory<McpToolsetServerConfig> {
  /** @inheritdoc */
  readonly transport = 'toolset';
  /** @inheritdoc */
  readonly optionKeys = optionKeys<Omit<McpToolsetServerConfig, keyof McpServerCommonConfig | 'transport'>>({
    mount: true,
    principal: true,
  });

  /** @inheritdoc */
  resolve(_server: string, entry: Record<string, unknown>): McpToolsetServerConfig {
    const principal = entry.principal;
    const valid =
      typeof principal === 'string' ? principal.length > 0 : typeof (principal as { key?: unknown })?.key === 'string';
    if (!valid) throw new Error('a toolset server needs "principal": a principal key, or { key, label }');
    if (entry.mount !== undefined && (typeof entry.mount !== 'string' || !entry.mount))
      throw new Error('"mount" must be the name of a mount of this app');
    return entry as unknown as McpToolsetServerConfig;
  }

  /** @inheritdoc */
  create(config: McpToolsetServerConfig, context: McpTransportFactoryContext): ToolsetTransport {
    const principal =
      typeof config.principal === 'string' ? { key: config.principal, label: config.principal } : config.principal;
    const token = getMcpToolsetToken(config.mount ?? DEFAULT_MOUNT);
    return new ToolsetTransport({
      principal: { key: principal.key, label: principal.label ?? principal.key, raw: config.principal },
      resolveHandler: () => context.resolve<McpMessageHandler>(token),
    });
  }

  /** In-process toolsets speak this app's own revisions: nothing to negotiate. */
  endpointKey(): null {
    return null;
  }
}
