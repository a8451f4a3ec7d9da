import { withElicitationDefaults } from './elicitation-defaults';

describe('withElicitationDefaults', () => {
  const params = {
    message: 'Profile',
    requestedSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        verified: { type: 'boolean', default: true },
        nickname: { type: 'string' },
      },
    },
  };

  it('fills the fields an accepting handler left out with their defaults', () => {
    expect(withElicitationDefaults(params, { action: 'accept', content: {} })).toEqual({
      action: 'accept',
      content: { name: 'John Doe', age: 30, verified: true },
    });
    expect(withElicitationDefaults(params, { action: 'accept' })).toEqual({
      action: 'accept',
      content: { name: 'John Doe', age: 30, verified: true },
    });
  });

  it('keeps what the handler answered, including false and empty values', () => {
    const answered = withElicitationDefaults(params, {
      action: 'accept',
      content: { name: '', verified: false, nickname: 'JD' },
    });
    expect(answered).toEqual({ action: 'accept', content: { name: '', age: 30, verified: false, nickname: 'JD' } });
  });

  it('leaves declined and cancelled answers, and forms without defaults, alone', () => {
    expect(withElicitationDefaults(params, { action: 'decline' })).toEqual({ action: 'decline' });
    expect(withElicitationDefaults(params, { action: 'cancel' })).toEqual({ action: 'cancel' });
    expect(withElicitationDefaults({ mode: 'url', url: 'https://example.com' }, { action: 'accept' })).toEqual({
      action: 'accept',
    });
  });
});
