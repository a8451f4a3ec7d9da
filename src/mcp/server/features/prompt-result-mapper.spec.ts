import { toGetPromptResult } from './prompt-result-mapper';

describe('toGetPromptResult', () => {
  it('turns a string into one user text message, with the prompt description', () => {
    expect(toGetPromptResult('hi', 'Greets')).toEqual({ description: 'Greets', messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] });
    expect(toGetPromptResult('hi', undefined)).toEqual({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] });
  });

  it('accepts an array of messages, string entries and string contents', () => {
    const image = { type: 'image' as const, data: 'AA==', mimeType: 'image/png' };
    expect(toGetPromptResult(['a', { role: 'assistant', content: 'b' }, { role: 'user', content: image }], undefined)).toEqual({
      messages: [
        { role: 'user', content: { type: 'text', text: 'a' } },
        { role: 'assistant', content: { type: 'text', text: 'b' } },
        { role: 'user', content: image },
      ],
    });
  });

  it("keeps a full result's own description and fields", () => {
    const result = { description: 'Own', messages: [{ role: 'user', content: { type: 'text', text: 'x' } }], _meta: { a: 1 } };
    expect(toGetPromptResult(result, 'Declared')).toEqual(result);
  });

  it.each([
    ['a number', 3],
    ['null', null],
    ['a message with a bad role', [{ role: 'system', content: 'x' }]],
    ['a message without a content type', [{ role: 'user', content: { text: 'x' } }]],
  ])('throws for %s', (_label, returned) => {
    expect(() => toGetPromptResult(returned, undefined)).toThrow();
  });
});
