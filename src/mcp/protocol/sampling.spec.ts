import { SAMPLING_TOOL_PARAMS, declaresSamplingTools, samplingCapabilityFor, samplingToolParams } from './sampling';

describe('tool use in sampling', () => {
  it('names the params that need the sampling.tools capability', () => {
    expect(SAMPLING_TOOL_PARAMS).toEqual(['tools', 'toolChoice']);
  });

  it.each<[Record<string, unknown> | null | undefined, string[]]>([
    [undefined, []],
    [null, []],
    [{}, []],
    [{ messages: [], maxTokens: 10 }, []],
    [{ tools: undefined, toolChoice: undefined }, []],
    [{ tools: [] }, ['tools']],
    [{ toolChoice: { mode: 'auto' } }, ['toolChoice']],
    [{ toolChoice: null }, ['toolChoice']],
    [{ messages: [], tools: [{ name: 'x' }], toolChoice: { mode: 'none' } }, ['tools', 'toolChoice']],
  ])('a createMessage request with params %j carries tool use params %j', (params, names) => {
    expect(samplingToolParams(params)).toEqual(names);
  });

  it.each<[Record<string, unknown> | null | undefined, boolean]>([
    [undefined, false],
    [null, false],
    [{}, false],
    [{ sampling: null }, false],
    [{ sampling: false }, false],
    [{ sampling: true }, false],
    [{ sampling: 'tools' }, false],
    [{ sampling: {} }, false],
    [{ sampling: { tools: null } }, false],
    [{ sampling: { tools: false } }, false],
    [{ sampling: { tools: undefined } }, false],
    [{ sampling: { tools: {} } }, true],
    [{ sampling: { tools: true } }, true],
    [{ sampling: { context: {}, tools: {} } }, true],
  ])('a client declaring %j declares tool use: %s', (capabilities, declared) => {
    expect(declaresSamplingTools(capabilities)).toBe(declared);
  });

  it('refuses a sampling capability that is not a plain object, even when it carries tools', () => {
    expect(declaresSamplingTools({ sampling: Object.assign([], { tools: {} }) })).toBe(false);
    expect(declaresSamplingTools({ sampling: Object.assign(() => undefined, { tools: {} }) })).toBe(false);
  });

  it('declares the capability a handler can answer, and reads it back the same', () => {
    expect(samplingCapabilityFor(true)).toEqual({ tools: {} });
    expect(samplingCapabilityFor(false)).toEqual({});
    expect(declaresSamplingTools({ sampling: samplingCapabilityFor(true) })).toBe(true);
    expect(declaresSamplingTools({ sampling: samplingCapabilityFor(false) })).toBe(false);
  });
});
