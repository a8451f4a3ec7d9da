import { storedHandlerName, storedPrincipalKey } from '../../persistence/new-records';
import { MCP_ANONYMOUS_PRINCIPAL } from './anonymous-principal';
import { HandlerSwitches } from './handler-switches';

const principal = (key: string) => ({ key, label: key, raw: key });
const on = (kind: string, name: string, principalKey: string | null) => ({
  mount: 'default',
  kind,
  name,
  principalKey,
  createdAt: new Date(0),
});

describe('HandlerSwitches', () => {
  it('allows everything while nothing is switched off', () => {
    const switches = new HandlerSwitches();
    expect(switches.active).toBe(false);
    expect(switches.allows('tool', 'greet', principal('bob'))).toBe(true);
  });

  it('applies switches for everyone and per principal, by kind', () => {
    const switches = new HandlerSwitches();
    switches.replace([on('tool', 'greet', 'bob'), on('prompt', 'summary', null)]);
    expect(switches.active).toBe(true);
    expect(switches.allows('tool', 'greet', principal('bob'))).toBe(false);
    expect(switches.allows('tool', 'greet', principal('alice'))).toBe(true);
    expect(switches.allows('prompt', 'greet', principal('bob'))).toBe(true);
    expect(switches.allows('prompt', 'summary', principal('alice'))).toBe(false);
    switches.replace([]);
    expect(switches.active).toBe(false);
    expect(switches.allows('prompt', 'summary', principal('alice'))).toBe(true);
  });

  it('matches names and principal keys too long for their column in their stored form, and as given', () => {
    const uri = `docs://${'a'.repeat(2000)}`;
    const key = 'k'.repeat(300);
    const stored = new HandlerSwitches();
    stored.replace([on('resource', storedHandlerName(uri), storedPrincipalKey(key))]);
    expect(stored.allows('resource', uri, principal(key))).toBe(false);
    expect(stored.allows('resource', uri, principal(`${key}x`))).toBe(true);
    expect(stored.allows('resource', `${uri}x`, principal(key))).toBe(true);
    const given = new HandlerSwitches();
    given.replace([on('resource', uri, key)]);
    expect(given.allows('resource', uri, principal(key))).toBe(false);
    expect(given.allows('resource', uri, principal('bob'))).toBe(true);
  });

  it('hides a handler marked authenticated-only from the anonymous principal until unmarked', () => {
    const switches = new HandlerSwitches();
    switches.authenticatedOnlyFor('tool', 'greet', true);
    expect(switches.allows('tool', 'greet', MCP_ANONYMOUS_PRINCIPAL)).toBe(false);
    expect(switches.allows('tool', 'greet', principal('bob'))).toBe(true);
    switches.authenticatedOnlyFor('tool', 'greet', false);
    expect(switches.active).toBe(false);
    expect(switches.allows('tool', 'greet', MCP_ANONYMOUS_PRINCIPAL)).toBe(true);
  });
});
