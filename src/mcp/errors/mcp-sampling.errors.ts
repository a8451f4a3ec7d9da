import { McpMethod } from '../protocol/mcp-methods';
import { StatelessErrorCode } from '../protocol/stateless';
import { McpRpcError } from './mcp-rpc.errors';

/**
 * `ctx.sample` was given `tools` or `toolChoice` but the client did not declare tool use in
 * sampling (`capabilities.sampling.tools`), so the spec forbids sending them. Nothing is sent. A
 * tool may catch it and sample without tools; uncaught it answers the request with the stateless
 * revision's missing-capability error (-32021), naming `sampling.tools` in
 * `data.requiredCapabilities`.
 */
export class McpUnsupportedSamplingToolsError extends McpRpcError {
  constructor(
    /** The tool use params the request carried (`tools`, `toolChoice`). */
    readonly params: readonly string[],
  ) {
    super(
      StatelessErrorCode.MissingRequiredClientCapability,
      `The client did not declare tool use in sampling (capabilities.sampling.tools) that this ${McpMethod.SamplingCreateMessage} with ${params.join(' and ')} needs`,
      { requiredCapabilities: { sampling: { tools: {} } } },
    );
    this.name = 'McpUnsupportedSamplingToolsError';
  }
}
