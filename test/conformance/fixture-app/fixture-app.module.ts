import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MCP_ENTITIES, McpModule } from '../../../src/mcp';
import { ConformancePrompts } from './conformance.prompts';
import { ConformanceResources } from './conformance.resources';
import { ConformanceTools } from './conformance.tools';
import { fixtureConfig } from './fixture.config';
import { InputRequiredTools } from './input-required.tools';
import { ListChangeTools } from './list-change.tools';

/**
 * The app the official conformance suite talks to: one MCP endpoint at /mcp, built only from the
 * module's public API (decorators and `McpModule.forRoot`), on a throwaway SQLite file.
 */
@Module({
  imports: [
    TypeOrmModule.forRoot({ type: 'better-sqlite3', database: fixtureConfig.databaseFile, entities: MCP_ENTITIES, synchronize: true }),
    McpModule.forRoot({
      auth: (token: string) => (token === fixtureConfig.token ? 'conformance' : null),
      server: { name: 'durable-mcp-conformance', title: 'durable-mcp conformance fixture' },
    }),
  ],
  providers: [ConformanceTools, InputRequiredTools, ConformanceResources, ConformancePrompts, ListChangeTools],
})
export class FixtureAppModule {}
