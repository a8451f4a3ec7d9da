import { randomBytes } from 'node:crypto';
import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { MCP_AUTHORIZATION_SERVER_ISSUER } from '../mcp.constants';
import { MCP_ENTITIES } from '../persistence/entities';
import type { McpAuthorizationServerModuleOptions } from './authorization-server.options';
import { McpAuthorizationServer } from './authorization-server.service';
import { McpAuthorizationServerModule } from './mcp-authorization-server.module';

const options = (publicUrl: string): McpAuthorizationServerModuleOptions => ({
  publicUrl,
  upstream: { issuer: 'https://login.example.com', clientId: 'as', clientSecret: 'secret' },
  encryptionKeys: [{ id: 'k1', key: randomBytes(32).toString('base64') }],
});

/** A class that makes the options, as `useClass` and `useExisting` take. */
@Injectable()
class AuthServerConfig {
  createMcpAuthorizationServerOptions(): McpAuthorizationServerModuleOptions {
    return options('https://class.example.com');
  }
}

@Module({ providers: [AuthServerConfig], exports: [AuthServerConfig] })
class ConfigModule {}

const SQLITE = TypeOrmModule.forRoot({
  type: 'better-sqlite3',
  database: ':memory:',
  entities: MCP_ENTITIES,
  synchronize: true,
});

describe('McpAuthorizationServerModule', () => {
  const modules: TestingModule[] = [];

  afterEach(async () => {
    for (const moduleRef of modules.splice(0)) await moduleRef.close();
  });

  async function issuerOf(module: ReturnType<typeof McpAuthorizationServerModule.forRoot>): Promise<string> {
    const moduleRef = await Test.createTestingModule({ imports: [SQLITE, module] }).compile();
    modules.push(moduleRef);
    await moduleRef.init();
    expect(moduleRef.get(McpAuthorizationServer).issuer).toBe(moduleRef.get(MCP_AUTHORIZATION_SERVER_ISSUER));
    return moduleRef.get<string>(MCP_AUTHORIZATION_SERVER_ISSUER);
  }

  it('takes its options from forRoot, or from forRootAsync with useFactory, useClass or useExisting', async () => {
    expect(await issuerOf(McpAuthorizationServerModule.forRoot(options('https://static.example.com')))).toBe(
      'https://static.example.com/oauth',
    );
    expect(
      await issuerOf(
        McpAuthorizationServerModule.forRootAsync({
          useFactory: async () => options('https://factory.example.com'),
        }),
      ),
    ).toBe('https://factory.example.com/oauth');
    expect(await issuerOf(McpAuthorizationServerModule.forRootAsync({ useClass: AuthServerConfig }))).toBe(
      'https://class.example.com/oauth',
    );
    expect(
      await issuerOf(
        McpAuthorizationServerModule.forRootAsync({ imports: [ConfigModule], useExisting: AuthServerConfig }),
      ),
    ).toBe('https://class.example.com/oauth');
  });

  it('refuses at once in forRoot, and at boot from a factory, options without encryption keys', async () => {
    const { encryptionKeys: _keys, ...withoutKeys } = options('https://mcp.example.com');
    expect(() => McpAuthorizationServerModule.forRoot(withoutKeys as McpAuthorizationServerModuleOptions)).toThrow(
      new RegExp('McpAuthorizationServerModule: option "encryptionKeys" is required'),
    );
    const moduleRef = Test.createTestingModule({
      imports: [
        SQLITE,
        McpAuthorizationServerModule.forRootAsync({
          useFactory: () => withoutKeys as McpAuthorizationServerModuleOptions,
        }),
      ],
    });
    await expect(moduleRef.compile()).rejects.toThrow(McpConfigurationError);
  });
});
