import { Injectable } from '@nestjs/common';
import { IsString } from 'class-validator';
import { McpClientService, McpTool, type McpToolContext } from '../mcp';
import { demoConfig } from './demo.config';

/** Input of `relay_echo`. */
export class RelayInput {
  @IsString()
  text: string;
}

/** A tool that uses the client side of the module: it calls `echo` through a durable job. */
@Injectable()
export class DemoRelayTools {
  constructor(private readonly client: McpClientService) {}

  /** Calls `echo` on RELAY_SERVER (default `self`, this app's own toolset) through the call queue. */
  @McpTool({
    name: 'relay_echo',
    description: 'Calls echo through McpClientService (a queued call) and returns its answer.',
    input: RelayInput,
  })
  async relay({ text }: RelayInput, ctx: McpToolContext) {
    const result = await this.client.callTool(demoConfig.relayServer, 'echo', {
      text: `${ctx.principal.label} via relay: ${text}`,
    });
    return result.content;
  }
}
