import { Injectable } from '@nestjs/common';
import { IsString } from 'class-validator';
import { McpClientService, McpTool, type McpToolContext } from '../mcp';

/** Input of `relay_echo`. */
export class RelayInput {
  @IsString()
  text: string;
}

/** A tool that uses the client side of the module: it calls `echo` through a durable job. */
@Injectable()
export class DemoRelayTools {
  constructor(private readonly client: McpClientService) {}

  /** Calls `echo` on the server named `self` (this app's own toolset) through the call queue. */
  @McpTool({ name: 'relay_echo', description: 'Calls echo through McpClientService (a queued call) and returns its answer.', input: RelayInput })
  async relay({ text }: RelayInput, ctx: McpToolContext) {
    const result = await this.client.callTool('self', 'echo', { text: `${ctx.principal.label} via relay: ${text}` });
    return result.content;
  }
}
