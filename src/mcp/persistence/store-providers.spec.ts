import type { Provider } from '@nestjs/common';
import { InMemoryMcpEventSink } from '../testing/in-memory-event-sink.store';
import { InMemoryMcpOutboundSessionStore } from '../testing/in-memory-outbound-session.store';
import { InMemoryMcpSessionStore } from '../testing/in-memory-session.store';
import { createInMemoryMcpStores } from '../testing/in-memory-stores';
import { MCP_EVENT_SINK, MCP_OUTBOUND_SESSION_STORE, MCP_SESSION_STORE } from './mcp-persistence.constants';
import {
  createMcpClientStoreProviders,
  createMcpServerStoreProviders,
  mcpClientStores,
  mcpServerStores,
} from './store-providers';
import { TypeOrmEventSink } from './typeorm/typeorm-event-sink.store';
import { TypeOrmSessionStore } from './typeorm/typeorm-session.store';

function providerOf(providers: Provider[], token: string | symbol): Provider | undefined {
  return providers.find((p) => typeof p === 'object' && 'provide' in p && p.provide === token);
}

describe('mcpServerStores / mcpClientStores', () => {
  it('mark the value for its module and keep every store given', () => {
    const events = new InMemoryMcpEventSink();
    const server = mcpServerStores({ sessions: InMemoryMcpSessionStore, events });
    expect(server).toMatchObject({ forMcpModule: true, sessions: InMemoryMcpSessionStore, events });
    const outboundSessions = new InMemoryMcpOutboundSessionStore();
    expect(mcpClientStores({ outboundSessions })).toMatchObject({ forMcpClientModule: true, outboundSessions });
  });

  it('build a class as useClass, an instance as useValue, and leave the rest on TypeORM', () => {
    const events = new InMemoryMcpEventSink();
    const { providers, needsTypeOrm } = createMcpServerStoreProviders(
      mcpServerStores({ sessions: InMemoryMcpSessionStore, events }),
    );
    expect(providerOf(providers, MCP_SESSION_STORE)).toEqual({
      provide: MCP_SESSION_STORE,
      useClass: InMemoryMcpSessionStore,
    });
    expect(providerOf(providers, MCP_EVENT_SINK)).toEqual({ provide: MCP_EVENT_SINK, useValue: events });
    expect(needsTypeOrm).toBe(true);
    expect(createMcpServerStoreProviders(mcpServerStores({})).providers).toContainEqual({
      provide: MCP_SESSION_STORE,
      useClass: TypeOrmSessionStore,
    });
  });

  it('accept the in-memory stores whole on both sides, with no TypeORM left', () => {
    const stores = createInMemoryMcpStores();
    expect(createMcpServerStoreProviders(stores).needsTypeOrm).toBe(false);
    const client = createMcpClientStoreProviders(stores);
    expect(client.needsTypeOrm).toBe(false);
    expect(providerOf(client.providers, MCP_OUTBOUND_SESSION_STORE)).toEqual({
      provide: MCP_OUTBOUND_SESSION_STORE,
      useValue: stores.outboundSessions,
    });
    expect(createMcpClientStoreProviders(mcpClientStores({})).providers).toContainEqual({
      provide: MCP_EVENT_SINK,
      useClass: TypeOrmEventSink,
    });
  });
});
