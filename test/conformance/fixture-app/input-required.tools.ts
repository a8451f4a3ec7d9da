import { Injectable } from '@nestjs/common';
import { McpTool, type McpToolContext } from '../../../src/mcp';
import { McpRpcError } from '../../../src/mcp/errors';

const NO_ARGS = { type: 'object', properties: {} };

/** JSON-RPC code of MissingRequiredClientCapabilityError (2026-07-28). */
const MISSING_CLIENT_CAPABILITY = -32021;

function nameSchema(property: string): Record<string, unknown> {
  return { type: 'object', properties: { [property]: { type: 'string' } }, required: [property] };
}

function samplingText(result: Record<string, unknown>): string {
  const content = result.content as { type?: string; text?: string } | undefined;
  return content?.type === 'text' ? String(content.text) : JSON.stringify(content ?? null);
}

/**
 * Tools of the 2026-07-28 scenarios: the diagnostic tools of `server-stateless` and the
 * SEP-2322 (`input-required-result-*`) tools. They are ordinary handlers calling `ctx.elicit`,
 * `ctx.sample` and `ctx.listRoots`: on 2026-07-28 the module turns those calls into
 * `input_required` results and replays the handler with the client's answers; on a 2025 session
 * they are server->client requests.
 */
@Injectable()
export class InputRequiredTools {
  /** Needs sampling: called without the capability, the module must answer -32021. */
  @McpTool({ name: 'test_missing_capability', description: 'Needs the client sampling capability.', input: NO_ARGS })
  async missingCapability(_input: unknown, ctx: McpToolContext): Promise<string> {
    const result = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: 'Say hi' } }],
      maxTokens: 10,
    });
    return `Sampled: ${samplingText(result)}`;
  }

  /** Elicits while the response streams: the stream may only carry notifications and the result. */
  @McpTool({
    name: 'test_streaming_elicitation',
    description: 'Elicits input in the middle of a call.',
    input: NO_ARGS,
  })
  async streamingElicitation(_input: unknown, ctx: McpToolContext): Promise<string> {
    await ctx.progress(0, 2);
    const answer = await ctx.elicit('Continue?', {
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok'],
    });
    await ctx.progress(2, 2);
    return `Streaming elicitation: ${answer.action}`;
  }

  /** Logs at every level; without `_meta` logLevel nothing may reach the client. */
  @McpTool({ name: 'test_logging_tool', description: 'Writes log messages while it runs.', input: NO_ARGS })
  async logging(_input: unknown, ctx: McpToolContext): Promise<string> {
    await ctx.log('info', 'Logging tool started');
    await ctx.log('warning', 'Logging tool warning');
    await ctx.log('error', 'Logging tool error');
    return 'Logging tool done';
  }

  /** The scenarios answer under the key `user_name`, which the handler names itself. */
  @McpTool({ name: 'test_input_required_result_elicitation', description: 'Asks for the user name.', input: NO_ARGS })
  async elicitation(_input: unknown, ctx: McpToolContext): Promise<string> {
    const answer = await ctx.elicit('What is your name?', nameSchema('name'), { key: 'user_name' });
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the conformance client may answer any value; the greeting shows it as text
    return `Hello, ${String(answer.content?.name ?? 'stranger')}!`;
  }

  @McpTool({
    name: 'test_input_required_result_sampling',
    description: 'Asks the client model a question.',
    input: NO_ARGS,
  })
  async sampling(_input: unknown, ctx: McpToolContext): Promise<string> {
    const result = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
      maxTokens: 100,
    });
    return `Model says: ${samplingText(result)}`;
  }

  @McpTool({ name: 'test_input_required_result_list_roots', description: 'Reads the client roots.', input: NO_ARGS })
  async listRoots(_input: unknown, ctx: McpToolContext): Promise<string> {
    const roots = await ctx.listRoots();
    return `Client roots: ${roots.map((root) => root.uri).join(', ')}`;
  }

  @McpTool({
    name: 'test_input_required_result_request_state',
    description: 'Asks for a confirmation (request state round trip).',
    input: NO_ARGS,
  })
  async requestState(_input: unknown, ctx: McpToolContext): Promise<string> {
    const answer = await ctx.elicit('Please confirm', {
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok'],
    });
    return `state-ok: confirmed=${String(answer.content?.ok)}`;
  }

  /** Three questions at once: elicitation, sampling and roots in one round. */
  @McpTool({
    name: 'test_input_required_result_multiple_inputs',
    description: 'Asks three things at once.',
    input: NO_ARGS,
  })
  async multipleInputs(_input: unknown, ctx: McpToolContext): Promise<string> {
    const [name, greeting, roots] = await Promise.all([
      ctx.elicit('What is your name?', nameSchema('name')),
      ctx.sample({
        messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
        maxTokens: 50,
      }),
      ctx.listRoots(),
    ]);
    return `${samplingText(greeting)} ${String(name.content?.name)} (${roots.length} roots)`;
  }

  /** Two questions, one after the other: two rounds. */
  @McpTool({
    name: 'test_input_required_result_multi_round',
    description: 'Asks two questions in turn.',
    input: NO_ARGS,
  })
  async multiRound(_input: unknown, ctx: McpToolContext): Promise<string> {
    const name = await ctx.elicit('Step 1: What is your name?', nameSchema('name'));
    const color = await ctx.elicit('Step 2: What is your favorite color?', nameSchema('color'));
    return `${String(name.content?.name)} likes ${String(color.content?.color)}`;
  }

  @McpTool({
    name: 'test_input_required_result_tampered_state',
    description: 'Asks once; its request state must be tamper-proof.',
    input: NO_ARGS,
  })
  async tamperedState(_input: unknown, ctx: McpToolContext): Promise<string> {
    const answer = await ctx.elicit('Please confirm', {
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok'],
    });
    return `confirmed=${String(answer.content?.ok)}`;
  }

  /** Asks the user if it can, else only the model: never asks for what the client did not declare. */
  @McpTool({
    name: 'test_input_required_result_capabilities',
    description: 'Uses only the capabilities the client declared.',
    input: NO_ARGS,
  })
  async capabilities(_input: unknown, ctx: McpToolContext): Promise<string> {
    let name = 'unknown';
    try {
      name = String((await ctx.elicit('What is your name?', nameSchema('name'))).content?.name);
    } catch (error) {
      if (!(error instanceof McpRpcError && error.code === MISSING_CLIENT_CAPABILITY)) throw error;
    }
    const greeting = await ctx.sample({
      messages: [{ role: 'user', content: { type: 'text', text: `Greet ${name}` } }],
      maxTokens: 50,
    });
    return samplingText(greeting);
  }

  /** SEP-2243: a parameter mirrored into the `Mcp-Param-Region` header. */
  @McpTool({
    name: 'test_custom_header_param',
    description: 'Echoes a parameter that clients mirror into an Mcp-Param header.',
    input: {
      type: 'object',
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
      required: ['region'],
    },
  })
  customHeader({ region }: { region: string }): string {
    return `region=${region}`;
  }
}
