import { McpStreamRegistry, type TrackedRequest } from './mcp-stream-registry';

/** A tracked request that counts how often the session's end closed it. */
function request(principalKey: string): TrackedRequest & { closed: number } {
  return {
    principalKey,
    closed: 0,
    close() {
      this.closed++;
    },
  };
}

describe('McpStreamRegistry requests', () => {
  it('closes the requests of an ended session, of one principal when named, until they are untracked', () => {
    const registry = new McpStreamRegistry();
    const alice = request('alice');
    const bob = request('bob');
    const elsewhere = request('alice');
    registry.trackRequest('s-1', alice);
    registry.trackRequest('s-1', bob);
    registry.trackRequest('s-2', elsewhere);
    expect(registry.sizes.requestSessions).toBe(2);

    registry.end('s-1', 'alice');
    expect([alice.closed, bob.closed, elsewhere.closed]).toEqual([1, 0, 0]);
    registry.end('s-1');
    expect([alice.closed, bob.closed, elsewhere.closed]).toEqual([2, 1, 0]);

    registry.untrackRequest(alice);
    expect(registry.sizes.requestSessions).toBe(2);
    registry.untrackRequest(bob);
    registry.untrackRequest(elsewhere);
    expect(registry.sizes.requestSessions).toBe(0);
    registry.end('s-1');
    expect([alice.closed, bob.closed]).toEqual([2, 1]);
  });
});
