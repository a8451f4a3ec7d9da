import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MCP_ENTITIES, McpModule } from '../../../src/mcp';
import { ConformancePrompts } from './conformance.prompts';
import { ConformanceResources } from './conformance.resources';
import { ConformanceTools } from './conformance.tools';
import { fixtureConfig } from './fixture.config';
import { FIXTURE_MCP_PATH, FIXTURE_TASKS_PATH } from './fixture-paths';
import { InputRequiredTools } from './input-required.tools';
import { ListChangeTools } from './list-change.tools';
import { TasksTools } from './tasks.tools';

const auth = (token: string) => (token === fixtureConfig.token ? 'conformance' : null);

/**
 * The app the official conformance suite talks to, built only from the module's public API
 * (decorators and `McpModule.forRoot`), on a throwaway SQLite file: the core scenarios' endpoint
 * at /mcp, and the tasks-extension scenarios' tools on a second mount at /tasks/mcp (tasks run in
 * process: no Redis).
 */
@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'better-sqlite3',
      database: fixtureConfig.databaseFile,
      entities: MCP_ENTITIES,
      synchronize: true,
    }),
    McpModule.forRoot({
      auth,
      path: FIXTURE_MCP_PATH,
      server: { name: 'durable-mcp-conformance', title: 'durable-mcp conformance fixture' },
      providers: [ConformanceTools, InputRequiredTools, ConformanceResources, ConformancePrompts, ListChangeTools],
    }),
    McpModule.forRoot({
      auth,
      mount: 'tasks',
      path: FIXTURE_TASKS_PATH,
      server: { name: 'durable-mcp-conformance-tasks', title: 'durable-mcp conformance fixture (tasks extension)' },
      providers: [TasksTools],
    }),
  ],
  providers: [
    ConformanceTools,
    InputRequiredTools,
    ConformanceResources,
    ConformancePrompts,
    ListChangeTools,
    TasksTools,
  ],
})
export class FixtureAppModule {}
