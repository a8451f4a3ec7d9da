import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import { observeGauge } from '../../telemetry/mcp-metrics';
import { McpAttr } from '../../telemetry/mcp-telemetry.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import { McpListenStreams } from '../stateless/listen-stream-registry';
import { McpStreamRegistry } from '../sessions/mcp-stream-registry';

/**
 * Reports a mount's live sessions and streams on this process to the OpenTelemetry gauges
 * `mcp.server.session.active` (sessions with a request in progress or a GET stream open here)
 * and `mcp.server.stream.active` (GET streams and stateless listen streams, by `mcp.stream.kind`).
 * Without a registered meter provider nothing is read.
 */
@Injectable()
export class McpServerGauges implements OnModuleInit, OnModuleDestroy {
  private readonly stops: Array<() => void> = [];

  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly streams: McpStreamRegistry,
    private readonly listenStreams: McpListenStreams,
  ) {}

  /** @inheritdoc */
  onModuleInit(): void {
    const mount = { [McpAttr.Mount]: this.options.mount };
    this.stops.push(
      observeGauge('mcp.server.session.active', () => [{ value: this.streams.activeSessions(), attributes: mount }]),
      observeGauge('mcp.server.stream.active', () => [
        { value: this.streams.sizes.streams, attributes: { ...mount, 'mcp.stream.kind': 'session' } },
        { value: this.listenStreams.size, attributes: { ...mount, 'mcp.stream.kind': 'listen' } },
      ]),
    );
  }

  /** @inheritdoc */
  onModuleDestroy(): void {
    this.stops.splice(0).forEach((stop) => stop());
  }
}
