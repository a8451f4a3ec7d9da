import { Injectable } from '@nestjs/common';
import { McpPrompt, type McpPromptMessage, type McpToolContext } from '../../../src/mcp';
import { RED_PIXEL_PNG } from './fixture-media';

const CITIES = ['paris', 'park', 'party', 'prague', 'porto'];

/** The prompts of the conformance suite (`prompts-*`, `completion-complete`, `input-required-result-non-tool-request`). */
@Injectable()
export class ConformancePrompts {
  @McpPrompt({ name: 'test_simple_prompt', description: 'A simple prompt without arguments.' })
  simple(): string {
    return 'This is a simple prompt for testing.';
  }

  @McpPrompt({
    name: 'test_prompt_with_arguments',
    description: 'A prompt with two required arguments.',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    complete: { arg1: (value: string) => CITIES.filter((city) => city.startsWith(value.toLowerCase())) },
  })
  withArguments({ arg1, arg2 }: { arg1: string; arg2: string }): string {
    return `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`;
  }

  @McpPrompt({
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that embeds a resource.',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  })
  withEmbeddedResource({ resourceUri }: { resourceUri: string }): McpPromptMessage[] {
    return [
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
        },
      },
      { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
    ];
  }

  @McpPrompt({ name: 'test_prompt_with_image', description: 'A prompt with an image.' })
  withImage(): McpPromptMessage[] {
    return [
      { role: 'user', content: { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ];
  }

  /** SEP-2322 on a non-tool request: the prompt needs the user's input first. */
  @McpPrompt({
    name: 'test_input_required_result_prompt',
    description: 'A prompt that asks the user for context first.',
  })
  async needingInput(_args: Record<string, string>, ctx: McpToolContext): Promise<string> {
    const answer = await ctx.elicit('What context should the prompt use?', {
      type: 'object',
      properties: { context: { type: 'string' } },
      required: ['context'],
    });
    return `Prompt with user context: ${JSON.stringify(answer.content?.context ?? null)}`;
  }
}
