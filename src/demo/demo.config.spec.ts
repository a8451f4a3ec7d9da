import { loadDemoConfig } from './demo.config';

describe('loadDemoConfig AUDIT_COMMIT', () => {
  it('commits audit rows synchronously unless AUDIT_COMMIT=async', () => {
    expect(loadDemoConfig({}).auditCommit).toBe('sync');
    expect(loadDemoConfig({ AUDIT_COMMIT: '' }).auditCommit).toBe('sync');
    expect(loadDemoConfig({ AUDIT_COMMIT: 'sync' }).auditCommit).toBe('sync');
    expect(loadDemoConfig({ AUDIT_COMMIT: ' async ' }).auditCommit).toBe('async');
  });

  it('refuses any other value, saying what it accepts', () => {
    expect(() => loadDemoConfig({ AUDIT_COMMIT: 'off' })).toThrow('AUDIT_COMMIT: "off" is neither sync nor async (example: AUDIT_COMMIT=async)');
  });
});

describe('loadDemoConfig THROTTLE_LIMIT and THROTTLE_TTL_MS', () => {
  it('defaults to 10 calls a minute, and reads both as positive integers', () => {
    expect(loadDemoConfig({}).throttle).toEqual({ limit: 10, ttlMs: 60_000 });
    expect(loadDemoConfig({ THROTTLE_LIMIT: ' ', THROTTLE_TTL_MS: '' }).throttle).toEqual({ limit: 10, ttlMs: 60_000 });
    expect(loadDemoConfig({ THROTTLE_LIMIT: ' 3 ', THROTTLE_TTL_MS: '1000' }).throttle).toEqual({ limit: 3, ttlMs: 1000 });
  });

  it.each([
    ['THROTTLE_LIMIT', '0', 'THROTTLE_LIMIT: "0" is not a positive integer (example: THROTTLE_LIMIT=10)'],
    ['THROTTLE_LIMIT', '2.5', 'THROTTLE_LIMIT: "2.5" is not a positive integer (example: THROTTLE_LIMIT=10)'],
    ['THROTTLE_TTL_MS', '1m', 'THROTTLE_TTL_MS: "1m" is not a positive integer (example: THROTTLE_TTL_MS=60000)'],
    ['THROTTLE_TTL_MS', '99999999999999999999', 'THROTTLE_TTL_MS: "99999999999999999999" is not a positive integer (example: THROTTLE_TTL_MS=60000)'],
  ])('refuses %s=%s, saying what it accepts', (name, value, message) => {
    expect(() => loadDemoConfig({ [name]: value })).toThrow(message);
  });
});
