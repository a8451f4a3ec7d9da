import type { McpGetPromptResult, McpPromptMessage } from '../../interfaces/mcp-prompt-options.interface';

const ROLES = new Set(['user', 'assistant']);

function toMessage(entry: unknown, index: number): McpPromptMessage {
  if (typeof entry === 'string') return { role: 'user', content: { type: 'text', text: entry } };
  const message = entry as { role?: unknown; content?: unknown } | null;
  if (!message || typeof message !== 'object' || !ROLES.has(message.role as string)) {
    throw new Error(`Prompt message ${index} needs a role of "user" or "assistant"`);
  }
  if (typeof message.content === 'string')
    return { ...(message as McpPromptMessage), content: { type: 'text', text: message.content } };
  const content = message.content as { type?: unknown } | null;
  if (!content || typeof content !== 'object' || typeof content.type !== 'string') {
    throw new Error(`Prompt message ${index} needs a content block with a "type"`);
  }
  return message as McpPromptMessage;
}

/**
 * Turns what a prompt handler returned into a `GetPromptResult`: a string becomes one user text
 * message, an array is the messages (string entries are user text, a message's string content
 * is a text block), and a full result (recognised by its `messages` array) passes through. The
 * prompt's description is filled in when the result has none.
 */
export function toGetPromptResult(returned: unknown, description: string | undefined): McpGetPromptResult {
  const described = description ? { description } : {};
  if (typeof returned === 'string') return { ...described, messages: [toMessage(returned, 0)] };
  if (Array.isArray(returned)) return { ...described, messages: returned.map(toMessage) };
  if (returned && typeof returned === 'object' && Array.isArray((returned as McpGetPromptResult).messages)) {
    const result = returned as McpGetPromptResult;
    return { ...described, ...result, messages: result.messages.map(toMessage) };
  }
  throw new Error('A prompt handler must return a string, an array of messages or a result with "messages"');
}
