import { declaredElicitationModes, elicitationCapabilityFor } from './elicitation';

describe('elicitation modes', () => {
  it.each<[Record<string, unknown> | null | undefined, string[]]>([
    [undefined, []],
    [null, []],
    [{}, []],
    [{ elicitation: null }, []],
    [{ elicitation: true }, []],
    [{ elicitation: 'url' }, []],
    [{ elicitation: {} }, ['form']],
    [{ elicitation: { form: {} } }, ['form']],
    [{ elicitation: { url: {} } }, ['url']],
    [{ elicitation: { form: {}, url: {} } }, ['form', 'url']],
    [{ elicitation: { other: {} } }, ['form']],
  ])('a client declaring %j can answer %j', (capabilities, modes) => {
    expect(declaredElicitationModes(capabilities)).toEqual(modes);
  });

  it('declares the capability a client can answer, and reads back the same modes', () => {
    expect(elicitationCapabilityFor([])).toBeUndefined();
    expect(elicitationCapabilityFor(['form'])).toEqual({});
    expect(elicitationCapabilityFor(['url'])).toEqual({ url: {} });
    expect(elicitationCapabilityFor(['form', 'url'])).toEqual({ form: {}, url: {} });
    for (const modes of [['form'], ['url'], ['form', 'url']] as const) {
      expect(declaredElicitationModes({ elicitation: elicitationCapabilityFor(modes) })).toEqual(modes);
    }
  });
});
