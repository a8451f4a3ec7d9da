import {
  LATEST_SESSION_PROTOCOL_VERSION,
  SESSION_PROTOCOL_VERSIONS,
  isSupportedSessionVersion,
  negotiateProtocolVersion,
} from './revisions';

describe('protocol revisions', () => {
  it('serves the three session revisions, newest first', () => {
    expect([...SESSION_PROTOCOL_VERSIONS]).toEqual(['2025-11-25', '2025-06-18', '2025-03-26']);
    expect(LATEST_SESSION_PROTOCOL_VERSION).toBe('2025-11-25');
  });

  it.each(['2025-11-25', '2025-06-18', '2025-03-26'])('echoes the supported revision %s', (version) => {
    expect(isSupportedSessionVersion(version)).toBe(true);
    expect(negotiateProtocolVersion(version)).toBe(version);
  });

  it.each([
    ['an old revision', '2024-11-05'],
    ['an unknown future revision', '2030-01-01'],
    ['garbage', 'latest'],
    ['the empty string', ''],
    ['a number', 20251125],
    ['undefined', undefined],
    ['null', null],
  ])('answers %s with the latest revision', (_label, requested) => {
    expect(isSupportedSessionVersion(requested)).toBe(false);
    expect(negotiateProtocolVersion(requested)).toBe('2025-11-25');
  });
});
