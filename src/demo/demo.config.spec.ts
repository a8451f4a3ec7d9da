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
