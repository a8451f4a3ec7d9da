import { UpstreamSelection } from './upstream-selection';

describe('UpstreamSelection', () => {
  it('selects every name without lists', () => {
    expect(new UpstreamSelection({ allow: [], deny: [] }).selects('anything')).toBe(true);
  });

  it('selects only what allow matches, whole names, with * as any run of characters', () => {
    const selection = new UpstreamSelection({ allow: ['echo', 'get-*'], deny: [] });
    expect(['echo', 'get-sum', 'get-', 'echoes', 'my-echo', 'forget-sum'].map((n) => selection.selects(n))).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it('lets deny win over allow, and reads other characters literally', () => {
    const selection = new UpstreamSelection({ allow: ['*'], deny: ['admin.*', 'a+b'] });
    expect(selection.selects('admin.reset')).toBe(false);
    expect(selection.selects('adminXreset')).toBe(true);
    expect(selection.selects('a+b')).toBe(false);
    expect(selection.selects('aab')).toBe(true);
  });
});
