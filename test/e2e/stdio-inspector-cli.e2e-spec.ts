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
 *
 * A run is two processes booting one after the other (the CLI, then the app: about 2.5 s of CPU
 * together): the runs of the first two cases go side by side. Each app writes a SQLite file of its
 * own: two apps creating the tables of one new file at once would race each other.
 */
describe("MCP Inspector's CLI against the example app over stdio", () => {
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-inspector-'));
  /** The SQLite file of each run so far. */
  const dbs: string[] = [];
  // The CLI reads its own package.json through a path it checks against its working directory
  // ("../package.json"): run it where that path exists, as it does in the Inspector's repository.
  const cwd = join(workdir, 'run');
  mkdirSync(cwd);
  writeFileSync(join(workdir, 'package.json'), '{}');

  afterAll(() => rmSync(workdir, { recursive: true, force: true }));

  function inspect(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const db = join(workdir, `run-${dbs.length + 1}.sqlite`);
    dbs.push(db);
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

  /** The rows `sql` selects in the files of all the runs so far. */
  async function rows(sql: string): Promise<Row[]> {
    const found: Row[] = [];
    for (const db of dbs) {
      const source = await new DataSource({ type: 'better-sqlite3', database: db, readonly: true }).initialize();
      try {
        found.push(...(await source.query<Row[]>(sql)));
      } finally {
        await source.destroy();
      }
    }
    return found;
  }

  it.concurrent('--method tools/list prints the tools with their schemas', async () => {
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

  it.concurrent('--method tools/call prints the result of a call with arguments', async () => {
    const [echoed, added, who] = await Promise.all([
      inspect('--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=hello inspector'),
      inspect('--method', 'tools/call', '--tool-name', 'add', '--tool-arg', 'a=2', 'b=3'),
      inspect('--method', 'tools/call', '--tool-name', 'whoami'),
    ]);
    expect(echoed.code).toBe(0);
    expect(JSON.parse(echoed.stdout)).toEqual({ content: [{ type: 'text', text: 'hello inspector' }] });

    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ structuredContent: { sum: 5 } });

    expect(JSON.parse(who.stdout)).toMatchObject({ structuredContent: { principal: 'desk', mount: 'default' } });
  });

  // After the runs above: it reads what every run left.
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
    expect(await rows("SELECT id FROM mcp_events WHERE method = 'tools/call'")).toHaveLength(4);
  });
});
