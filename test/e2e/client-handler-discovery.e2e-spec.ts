import { Injectable, Scope, type Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  McpClientModule,
  McpElicitationHandler,
  McpRootsHandler,
  McpSamplingHandler,
  type McpClientOptions,
} from '../../src/mcp';
import { McpConfigurationError, McpRpcError } from '../../src/mcp/errors';
import { McpServerRequestDispatcher } from '../../src/mcp/client/handlers/server-request-dispatcher';
import { createInMemoryMcpStores } from '../../src/mcp/testing';

@Injectable()
class SamplingHandlers {
  @McpSamplingHandler()
  sample(): Record<string, unknown> {
    return { model: 'provider-model' };
  }
}

@Injectable()
class OtherSamplingHandlers {
  @McpSamplingHandler()
  alsoSample(): Record<string, unknown> {
    return { model: 'other' };
  }
}

@Injectable({ scope: Scope.REQUEST })
class PerRequestHandlers {
  @McpRootsHandler()
  roots(): Record<string, unknown> {
    return { roots: [] };
  }
}

@Injectable()
class ElicitationHandlers {
  @McpElicitationHandler()
  elicit(): Record<string, unknown> {
    return { action: 'decline' };
  }
}

/** Boots a client-only app; resolves to the dispatcher that answers server requests. */
async function boot(
  providers: Provider[],
  handlers: McpClientOptions['handlers'] = {},
): Promise<{ dispatcher: McpServerRequestDispatcher; close: () => Promise<void> }> {
  const moduleRef = await Test.createTestingModule({
    imports: [McpClientModule.forRoot({ servers: {}, handlers, stores: createInMemoryMcpStores() })],
    providers,
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  try {
    await app.init();
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  return { dispatcher: app.get(McpServerRequestDispatcher, { strict: false }), close: () => app.close() };
}

describe('Discovery of the client handlers', () => {
  it('announces one capability per kind with a handler, from the options and from decorated providers', async () => {
    const { dispatcher, close } = await boot([SamplingHandlers, ElicitationHandlers], {
      roots: () => ({ roots: [{ uri: 'file:///opt' }] }),
    });
    try {
      expect(dispatcher.capabilities()).toEqual({ roots: { listChanged: false }, sampling: {}, elicitation: {} });
      const answer = dispatcher.forCall('s', '');
      await expect(answer({ jsonrpc: '2.0', id: 1, method: 'sampling/createMessage', params: {} })).resolves.toEqual({
        model: 'provider-model',
      });
      await expect(answer({ jsonrpc: '2.0', id: 2, method: 'roots/list' })).resolves.toEqual({
        roots: [{ uri: 'file:///opt' }],
      });
    } finally {
      await close();
    }
  });

  it('skips a handler of a request-scoped provider (and a kind the options leave undefined): neither announced nor answered', async () => {
    const { dispatcher, close } = await boot([PerRequestHandlers], { elicitation: undefined });
    try {
      expect(dispatcher.capabilities()).toEqual({});
      const refused = dispatcher.forCall('s', '')({ jsonrpc: '2.0', id: 1, method: 'roots/list' });
      await expect(refused).rejects.toBeInstanceOf(McpRpcError);
      await expect(refused).rejects.toMatchObject({ code: -32601, message: 'Method not found: roots/list' });
    } finally {
      await close();
    }
  });

  it('refuses two decorated handlers of one kind at boot, naming both', async () => {
    const failure = boot([SamplingHandlers, OtherSamplingHandlers]);
    await expect(failure).rejects.toBeInstanceOf(McpConfigurationError);
    await expect(failure).rejects.toThrow(
      'Two MCP sampling handlers: SamplingHandlers#sample and OtherSamplingHandlers#alsoSample.',
    );
  });

  it('refuses a decorated handler of a kind the options already answer, naming both', async () => {
    const failure = boot([SamplingHandlers], { sampling: () => ({ model: 'options' }) });
    await expect(failure).rejects.toBeInstanceOf(McpConfigurationError);
    await expect(failure).rejects.toThrow(
      'Two MCP sampling handlers: client.handlers.sampling and SamplingHandlers#sample.',
    );
  });
});
