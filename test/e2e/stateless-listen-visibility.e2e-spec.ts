import { Injectable, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common';
import {
  getMcpContext,
  McpModule,
  McpRegistry,
  McpResource,
  McpResourceNotifier,
  McpResourceTemplate,
  type McpAuthResult,
  type McpResourceRequest,
} from '../../src/mcp';
import { SseReader } from '../fixtures/sse/sse-reader';
import { routingHeaders, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const PEOPLE: Record<string, McpAuthResult> = {
  'token-ada': { key: 'ada', label: 'Ada' },
  'token-bob': { key: 'bob', label: 'Bob' },
};
const auth = (token: string) => PEOPLE[token] ?? null;

/** Lets only Ada through: a guard of the app's own, asked at listen time like at list time. */
@Injectable()
class AdaOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return getMcpContext(context)?.principal.key === 'ada';
  }
}

@Injectable()
class Catalog {
  @McpResource({ uri: 'docs://faq', name: 'faq', public: true })
  faq() {
    return 'Ask away.';
  }

  @McpResource({ uri: 'ops://secrets', name: 'secrets' })
  secrets() {
    return 'hunter2';
  }

  @UseGuards(AdaOnlyGuard)
  @McpResource({ uri: 'vault://ada', name: 'ada-vault' })
  vault() {
    return "Ada's notes";
  }

  @McpResource({ uri: 'docs://switchable', name: 'switchable', public: true })
  switchable() {
    return 'on or off';
  }

  @McpResourceTemplate({ uriTemplate: 'reports://{id}', name: 'report', public: true })
  report({ uri, params }: McpResourceRequest) {
    return { contents: [{ uri, text: `report ${params.id}` }] };
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire JSON read by the assertions
async function nextMessage(reader: SseReader): Promise<any> {
  const event = await reader.next();
  if (!event) throw new Error('the listen stream ended');
  return JSON.parse(event.data);
}

/**
 * `subscriptions/listen` (2026-07-28) applies the visibility rules of `resources/subscribe` and of
 * the lists: the built-in guard of `public` for the anonymous caller, the resource's own guards,
 * and the registry's switches for one principal or for everyone. A resource the caller may not
 * see is left out of the acknowledgment exactly like an unknown URI, and a switch turned off
 * after the stream opened stops its updates.
 */
describe('subscriptions/listen visibility (2026-07-28)', () => {
  let db: TestDatabase;
  let app: RunningApp;
  const readers: SseReader[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth, anonymous: true, providers: [Catalog] })],
      providers: [Catalog],
    });
  });

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.cancel()));
    await app?.close();
    await db?.drop();
  });

  /** Opens a listen stream for the token (none: the anonymous caller) and reads its acknowledgment. */
  async function listen(
    token: string | null,
    id: number,
    resourceSubscriptions: string[],
  ): Promise<{ reader: SseReader; agreed: unknown }> {
    const body = statelessRequest(id, 'subscriptions/listen', { notifications: { resourceSubscriptions } });
    const response = await fetch(`${app.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        ...routingHeaders(body),
        'Content-Type': 'application/json',
        Accept: MCP_ACCEPT,
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const reader = new SseReader(response);
    readers.push(reader);
    const ack = await nextMessage(reader);
    expect(ack.method).toBe('notifications/subscriptions/acknowledged');
    return { reader, agreed: ack.params.notifications };
  }

  const notifier = () => app.app.get(McpResourceNotifier);
  const registry = () => app.app.get(McpRegistry);

  it('leaves out, for the anonymous caller, the resources that are not public, exactly like unknown URIs', async () => {
    const { reader, agreed } = await listen(null, 1, [
      'docs://faq',
      'ops://secrets',
      'vault://ada',
      'docs://nothing-here',
      'reports://7',
    ]);
    expect(agreed).toEqual({ resourceSubscriptions: ['docs://faq', 'reports://7'] });
    // A hidden URI and an unknown one get the same answer.
    expect((await listen(null, 2, ['ops://secrets'])).agreed).toEqual(
      (await listen(null, 3, ['docs://nothing-here'])).agreed,
    );
    // The hidden resource's update does not reach the stream; the next one that does is the public one.
    await notifier().resourceUpdated('ops://secrets');
    await notifier().resourceUpdated('docs://faq');
    expect((await nextMessage(reader)).params.uri).toBe('docs://faq');
    // A signed-in caller does get the resource that is not public.
    expect((await listen('token-bob', 4, ['docs://faq', 'ops://secrets'])).agreed).toEqual({
      resourceSubscriptions: ['docs://faq', 'ops://secrets'],
    });
  });

  it("applies the resource's own guards: only Ada agrees to her vault", async () => {
    expect((await listen('token-bob', 10, ['vault://ada', 'docs://faq'])).agreed).toEqual({
      resourceSubscriptions: ['docs://faq'],
    });
    expect((await listen('token-ada', 11, ['vault://ada', 'docs://faq'])).agreed).toEqual({
      resourceSubscriptions: ['vault://ada', 'docs://faq'],
    });
  });

  it('applies the registry switches, for one principal and for everyone', async () => {
    await registry().disable('resource', 'docs://switchable', { principals: ['bob'] });
    await registry().disable('resourceTemplate', 'reports://{id}');
    try {
      expect((await listen('token-bob', 20, ['docs://switchable', 'reports://1', 'docs://faq'])).agreed).toEqual({
        resourceSubscriptions: ['docs://faq'],
      });
      expect((await listen('token-ada', 21, ['docs://switchable', 'reports://1', 'docs://faq'])).agreed).toEqual({
        resourceSubscriptions: ['docs://switchable', 'docs://faq'],
      });
    } finally {
      await registry().enable('resource', 'docs://switchable');
      await registry().enable('resourceTemplate', 'reports://{id}');
    }
  });

  it('stops announcing a resource switched off for the listener after its stream opened, and resumes once it is on again', async () => {
    const { reader, agreed } = await listen('token-ada', 30, ['docs://switchable', 'docs://faq']);
    expect(agreed).toEqual({ resourceSubscriptions: ['docs://switchable', 'docs://faq'] });
    await registry().disable('resource', 'docs://switchable', { principals: ['ada'] });
    try {
      await notifier().resourceUpdated('docs://switchable');
      await notifier().resourceUpdated('docs://faq');
      expect((await nextMessage(reader)).params.uri).toBe('docs://faq');
    } finally {
      await registry().enable('resource', 'docs://switchable', { principals: ['ada'] });
    }
    await notifier().resourceUpdated('docs://switchable');
    expect((await nextMessage(reader)).params.uri).toBe('docs://switchable');
  });
});
