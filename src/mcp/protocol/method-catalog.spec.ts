import { McpMethod } from './mcp-methods';
import {
  CLIENT_CAPABILITY_OF_REQUEST,
  MCP_METHOD_CATALOG,
  existsInRevision,
  methodFacts,
  type McpMethodFacts,
} from './method-catalog';
import { SESSION_PROTOCOL_VERSIONS } from './revisions';
import { STATELESS_PROTOCOL_VERSION } from './stateless';

const names = (predicate: (facts: McpMethodFacts) => boolean) =>
  MCP_METHOD_CATALOG.filter(predicate).map((facts) => facts.method);
const clientRequests = (facts: McpMethodFacts) => facts.kind === 'request' && facts.senders.includes('client');

describe('the MCP method catalog', () => {
  it('has exactly one entry per McpMethod name, and nothing else', () => {
    expect(MCP_METHOD_CATALOG.map((facts) => facts.method)).toEqual(Object.values(McpMethod));
    expect(new Set(MCP_METHOD_CATALOG.map((facts) => facts.method)).size).toBe(MCP_METHOD_CATALOG.length);
  });

  it('knows nothing of methods MCP does not define', () => {
    expect(methodFacts('some/custom')).toBeUndefined();
    expect(methodFacts('Tools/Call')).toBeUndefined();
  });

  it.each([
    // method, idempotent, inputRequired, cacheable, nameSource
    ['tools/call', false, true, false, 'name'],
    ['tools/list', true, false, true, null],
    ['prompts/get', true, true, false, 'name'],
    ['prompts/list', true, false, true, null],
    ['resources/read', true, true, true, 'uri'],
    ['resources/list', true, false, true, null],
    ['resources/templates/list', true, false, true, null],
    ['server/discover', true, false, true, null],
    ['completion/complete', true, false, false, null],
    ['logging/setLevel', true, false, false, null],
    ['ping', true, false, false, null],
    ['initialize', false, false, false, null],
    ['subscriptions/listen', false, false, false, null],
    ['tasks/cancel', false, false, false, 'taskId'],
    ['tasks/update', false, false, false, 'taskId'],
  ])(
    '%s: idempotent %s, input_required %s, cacheable %s, Mcp-Name from %s',
    (method, idempotent, inputRequired, cacheable, nameSource) => {
      expect(methodFacts(method)).toMatchObject({ kind: 'request', idempotent, inputRequired, cacheable, nameSource });
    },
  );

  it('lets only tools/call, prompts/get and resources/read come back input_required', () => {
    expect(names((facts) => facts.inputRequired)).toEqual(['tools/call', 'prompts/get', 'resources/read']);
  });

  it('caches the complete results of discovery, the lists and resources/read only', () => {
    expect(names((facts) => facts.cacheable).sort()).toEqual(
      [
        'prompts/list',
        'resources/list',
        'resources/read',
        'resources/templates/list',
        'server/discover',
        'tools/list',
      ].sort(),
    );
  });

  it('names an Mcp-Name source exactly for the requests that target one tool, prompt, resource or task', () => {
    expect(
      Object.fromEntries(
        MCP_METHOD_CATALOG.filter((facts) => facts.nameSource).map((facts) => [facts.method, facts.nameSource]),
      ),
    ).toEqual({
      'tools/call': 'name',
      'prompts/get': 'name',
      'resources/read': 'uri',
      'tasks/get': 'taskId',
      'tasks/cancel': 'taskId',
      'tasks/update': 'taskId',
    });
  });

  it('keeps tools/call as the one non-idempotent request a client routinely sends', () => {
    expect(names((facts) => clientRequests(facts) && !facts.idempotent)).toEqual([
      'initialize',
      'tools/call',
      'subscriptions/listen',
      'tasks/cancel',
      'tasks/update',
    ]);
  });

  it('calls every notification idempotent and every cacheable request idempotent', () => {
    for (const facts of MCP_METHOD_CATALOG) {
      if (facts.kind === 'notification' || facts.cacheable)
        expect({ method: facts.method, idempotent: facts.idempotent }).toEqual({
          method: facts.method,
          idempotent: true,
        });
    }
  });

  it.each([
    ['tools/list', { holder: 'server', name: 'tools' }],
    ['tools/call', { holder: 'server', name: 'tools' }],
    ['prompts/list', { holder: 'server', name: 'prompts' }],
    ['prompts/get', { holder: 'server', name: 'prompts' }],
    ['resources/list', { holder: 'server', name: 'resources' }],
    ['resources/templates/list', { holder: 'server', name: 'resources' }],
    ['resources/read', { holder: 'server', name: 'resources' }],
    ['resources/subscribe', { holder: 'server', name: 'resources', sub: 'subscribe' }],
    ['resources/unsubscribe', { holder: 'server', name: 'resources', sub: 'subscribe' }],
    ['completion/complete', { holder: 'server', name: 'completions' }],
    ['logging/setLevel', { holder: 'server', name: 'logging' }],
    ['sampling/createMessage', { holder: 'client', name: 'sampling' }],
    ['elicitation/create', { holder: 'client', name: 'elicitation' }],
    ['roots/list', { holder: 'client', name: 'roots' }],
    ['initialize', null],
    ['ping', null],
    ['server/discover', null],
    ['subscriptions/listen', null],
    ['tasks/get', null],
    ['notifications/cancelled', null],
  ])('%s needs the capability %j', (method, capability) => {
    expect(methodFacts(method)?.capability).toEqual(capability);
  });

  it('names each kind of client handler after the client capability its requests need', () => {
    expect(Object.fromEntries(CLIENT_CAPABILITY_OF_REQUEST)).toEqual({
      'sampling/createMessage': 'sampling',
      'elicitation/create': 'elicitation',
      'roots/list': 'roots',
    });
  });

  it('asks server capabilities of client requests and client capabilities of server requests', () => {
    for (const facts of MCP_METHOD_CATALOG.filter((entry) => entry.capability)) {
      const expected = facts.senders.includes('client') ? 'server' : 'client';
      expect({ method: facts.method, holder: facts.capability?.holder }).toEqual({
        method: facts.method,
        holder: expected,
      });
    }
  });

  it('drops the handshake, ping, setLevel, resource subscriptions and the 2025 task methods from the stateless revision', () => {
    expect(names((facts) => clientRequests(facts) && !facts.revisions.includes('stateless'))).toEqual([
      'initialize',
      'ping',
      'resources/subscribe',
      'resources/unsubscribe',
      'logging/setLevel',
      'tasks/result',
      'tasks/list',
    ]);
  });

  it('adds server/discover, subscriptions/listen, the acknowledgment, tasks/update and notifications/tasks on the stateless revision only', () => {
    expect(names((facts) => !facts.revisions.includes('session'))).toEqual([
      'server/discover',
      'subscriptions/listen',
      'tasks/update',
      'notifications/tasks',
      'notifications/subscriptions/acknowledged',
    ]);
  });

  it.each([
    ['tools/call', '2025-11-25', true],
    ['tools/call', STATELESS_PROTOCOL_VERSION, true],
    ['initialize', '2025-03-26', true],
    ['initialize', STATELESS_PROTOCOL_VERSION, false],
    ['logging/setLevel', '2025-06-18', true],
    ['logging/setLevel', STATELESS_PROTOCOL_VERSION, false],
    ['resources/subscribe', STATELESS_PROTOCOL_VERSION, false],
    ['server/discover', STATELESS_PROTOCOL_VERSION, true],
    ['server/discover', '2025-11-25', false],
    ['tools/call', '2024-11-05', false],
    ['tools/call', undefined, false],
    ['some/custom', STATELESS_PROTOCOL_VERSION, false],
  ])('existsInRevision(%s, %s) is %s', (method, version, expected) => {
    expect(existsInRevision(method, version)).toBe(expected);
  });

  it('treats every session revision alike', () => {
    for (const version of SESSION_PROTOCOL_VERSIONS)
      expect(existsInRevision(McpMethod.ResourcesUnsubscribe, version)).toBe(true);
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(MCP_METHOD_CATALOG)).toBe(true);
    expect(Object.isFrozen(methodFacts(McpMethod.ToolsCall))).toBe(true);
  });
});
