import { Injectable } from '@nestjs/common';
import { McpRegistry, McpTool } from '../../../src/mcp';

const NO_ARGS = { type: 'object', properties: {} };

/**
 * The diagnostic hooks the conformance suite calls to check list-changed notifications
 * (`test_trigger_tool_change`, `test_trigger_prompt_change`): each adds a handler through
 * `McpRegistry`, or removes it again on the next call, so the lists change the way an app's
 * runtime registration changes them.
 */
@Injectable()
export class ListChangeTools {
  constructor(private readonly registry: McpRegistry) {}

  @McpTool({
    name: 'test_trigger_tool_change',
    description: 'Adds or removes the tool test_dynamic_tool (list_changed follows).',
    input: NO_ARGS,
  })
  async toolChange(): Promise<string> {
    if (await this.registry.removeTool('test_dynamic_tool')) return 'removed test_dynamic_tool';
    await this.registry.addTool(
      { name: 'test_dynamic_tool', description: 'Added at run time.', input: NO_ARGS },
      () => 'dynamic',
    );
    return 'added test_dynamic_tool';
  }

  @McpTool({
    name: 'test_trigger_prompt_change',
    description: 'Adds or removes the prompt test_dynamic_prompt (list_changed follows).',
    input: NO_ARGS,
  })
  async promptChange(): Promise<string> {
    if (await this.registry.removePrompt('test_dynamic_prompt')) return 'removed test_dynamic_prompt';
    await this.registry.addPrompt(
      { name: 'test_dynamic_prompt', description: 'Added at run time.' },
      () => 'dynamic prompt',
    );
    return 'added test_dynamic_prompt';
  }
}
