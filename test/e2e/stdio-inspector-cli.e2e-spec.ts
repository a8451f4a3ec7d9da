import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DataSource } from 'typeorm';
import { TS_REGISTER } from '../support/child-process';
import { childEnv } from '../fixtures/stdio-serve/stdio-serve-kit';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');
/** The MCP Inspector's command-line client (the CLI of Inspector 1.x, which runs on Node 20). */
const INSPECTOR_CLI = join(
  dirname(require.resolve('@modelcontextprotocol/inspector-cli/package.json')),
  'build',
  'cli.js',
);

type Row = Record<string, unknown>;

/**
 * The example app served over stdio (`--stdio`), driven by MCP Inspector's CLI as a user runs it:
 * `mcp-inspector-cli --cli <command> --method ...`, the answer printed as JSON on stdout. Each run
 * spawns the app, initializes a 2025-11-25 session, makes one request and closes stdin.
 */
describe("MCP Inspector's CLI against the example app over stdio", () => {
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-inspector-'));
  const db = join(workdir, 'app.sqlite');
  // The CLI reads its own package.json through a path it checks against its working directory
  // ("../package.json"): run it where that path exists, as it does in the Inspector's repository.
  const cwd = join(workdir, 'run');
  mkdirSync(cwd);
  writeFileSync(join(workdir, 'package.json'), '{}');

  afterAll(() => rmSync(workdir, { recursive: true, force: true }));

  function inspect(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const env = childEnv({
      SQLITE_FILE: db,
      MCP_STDIO_PRINCIPAL: 'desk',
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
    });
    const app = [process.execPath, '-r', TS_REGISTER, join(ROOT, 'src', 'main.ts'), '--stdio'];
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [INSPECTOR_CLI, '--cli', ...app, ...args],
        { cwd, env, timeout: 90_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  async function rows(sql: string): Promise<Row[]> {
    const source = await new DataSource({ type: 'better-sqlite3', database: db, readonly: true }).initialize();
    try {
      return await source.query<Row[]>(sql);
    } finally {
      await source.destroy();
    }
  }

  it('--method tools/list prints the tools with their schemas', async () => {
    const { code, stdout, stderr } = await inspect('--method', 'tools/list');
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    const { tools } = JSON.parse(stdout) as { tools: { name: string; inputSchema: unknown }[] };
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'add', 'whoami']));
    expect(tools.find((tool) => tool.name === 'echo')?.inputSchema).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
  });

  it('--method tools/call prints the result of a call with arguments', async () => {
    const echoed = await inspect('--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=hello inspector');
    expect(echoed.code).toBe(0);
    expect(JSON.parse(echoed.stdout)).toEqual({ content: [{ type: 'text', text: 'hello inspector' }] });

    const added = await inspect('--method', 'tools/call', '--tool-name', 'add', '--tool-arg', 'a=2', 'b=3');
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ structuredContent: { sum: 5 } });

    const who = await inspect('--method', 'tools/call', '--tool-name', 'whoami');
    expect(JSON.parse(who.stdout)).toMatchObject({ structuredContent: { principal: 'desk', mount: 'default' } });
  });

  it('prints invalid arguments as a tool error, and each run left its session ended and its rows', async () => {
    const bad = await inspect('--method', 'tools/call', '--tool-name', 'add', '--tool-arg', 'a=two', 'b=3');
    expect(bad.code).toBe(0);
    expect(JSON.parse(bad.stdout)).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining('Invalid arguments for tool "add"') }],
    });
    const sessions = await rows('SELECT principal_key, terminated_at FROM mcp_inbound_sessions');
    expect(sessions).toHaveLength(5);
    expect(sessions.filter((row) => row.principal_key !== 'desk' || row.terminated_at === null)).toEqual([]);
    expect(await rows("SELECT count(*) AS n FROM mcp_events WHERE method = 'tools/call'")).toEqual([{ n: 4 }]);
  });
});
