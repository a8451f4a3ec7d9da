import { toGetPromptResult } from './prompt-result-mapper';

describe('toGetPromptResult', () => {
  it('turns a string into one user text message, with the prompt description', () => {
    expect(toGetPromptResult('hi', 'Greets')).toEqual({
      description: 'Greets',
      messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
    });
    expect(toGetPromptResult('hi', undefined)).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
    });
  });

  it('accepts an array of messages, string entries and string contents', () => {
    const image = { type: 'image' as const, data: 'AA==', mimeType: 'image/png' };
    expect(
      toGetPromptResult(['a', { role: 'assistant', content: 'b' }, { role: 'user', content: image }], undefined),
    ).toEqual({
      messages: [
        { role: 'user', content: { type: 'text', text: 'a' } },
        { role: 'assistant', content: { type: 'text', text: 'b' } },
        { role: 'user', content: image },
      ],
    });
  });

  it("keeps a full result's own description and fields", () => {
    const result = {
      description: 'Own',
      messages: [{ role: 'user', content: { type: 'text', text: 'x' } }],
      _meta: { a: 1 },
    };
    expect(toGetPromptResult(result, 'Declared')).toEqual(result);
  });

  const notAResult = 'A prompt handler must return a string, an array of messages or a result with "messages"';
  it.each([
    ['a number', 3, notAResult],
    ['null', null, notAResult],
    [
      'a message with a bad role',
      ['ok', { role: 'system', content: 'x' }],
      'Prompt message 1 needs a role of "user" or "assistant"',
    ],
    [
      'a message without a content type',
      [{ role: 'user', content: { text: 'x' } }],
      'Prompt message 0 needs a content block with a "type"',
    ],
  ])('throws for %s, naming the problem', (_label, returned, message) => {
    expect(() => toGetPromptResult(returned, undefined)).toThrow(new Error(message));
  });
});
