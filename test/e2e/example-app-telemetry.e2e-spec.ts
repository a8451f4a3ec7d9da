import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort, spawnReady, TS_REGISTER, type ReadyChild } from '../support/child-process';
import { pollUntil } from '../support/polling';
import { randomTraceparent } from '../support/telemetry';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');

/**
 * The example app with OTEL_EXPORTER_OTLP_ENDPOINT (a loopback collector that keeps what it is
 * sent) and METRICS_PORT: a traced call reaches the collector as OTLP/HTTP, and the Prometheus
 * endpoint serves the package's metrics.
 */
describe('the example app with OTEL_EXPORTER_OTLP_ENDPOINT and METRICS_PORT', () => {
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-otel-'));
  const exports: { path: string; body: string }[] = [];
  let collector: Server;
  let app: ReadyChild | undefined;
  let url: URL;
  let metricsPort: number;

  beforeAll(async () => {
    collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        exports.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const [port, metrics] = [await freeLoopbackPort(), await freeLoopbackPort()];
    metricsPort = metrics;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      MCP_TOKENS: 'alice=token-a',
      HOST: '127.0.0.1',
      PORT: String(port),
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      METRICS_PORT: String(metricsPort),
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
    };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    app = await spawnReady(
      process.execPath,
      ['-r', TS_REGISTER, join(ROOT, 'src', 'main.ts')],
      { cwd: workdir, env },
      /MCP endpoint: (\S+) /,
    );
    url = new URL(app.ready[1]);
  });

  afterAll(async () => {
    await app?.stop();
    collector?.closeAllConnections();
    await new Promise<void>((resolve) => (collector ? collector.close(() => resolve()) : resolve()));
    rmSync(workdir, { recursive: true, force: true });
  });

  it('exports the spans of a traced call over OTLP/HTTP and serves the metrics for Prometheus', async () => {
    const caller = randomTraceparent();
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { Authorization: 'Bearer token-a' } },
    });
    const client = new Client({ name: 'otel-example', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(
        (
          await client.callTool({
            name: 'echo',
            arguments: { text: 'exported' },
            _meta: { traceparent: caller.traceparent },
          })
        ).content,
      ).toEqual([{ type: 'text', text: 'exported' }]);
    } finally {
      await client.close();
    }
    const traces = await pollUntil(
      'the call span at the collector',
      () =>
        exports.find(
          (sent) =>
            sent.path === '/v1/traces' && sent.body.includes('tools/call echo') && sent.body.includes(caller.traceId),
        ),
      60_000,
    );
    expect(traces.body).toContain('"durable-mcp"');
    expect(traces.body).toContain('execute_tool echo');
    const scrape = await pollUntil('the duration histogram at /metrics', async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      return text.includes('mcp_server_operation_duration') ? text : undefined;
    });
    const callCount = scrape
      .split('\n')
      .find(
        (line) =>
          line.startsWith('mcp_server_operation_duration_count{') && line.includes('mcp_method_name="tools/call"'),
      );
    expect(callCount).toContain('gen_ai_tool_name="echo"');
    expect(callCount).toMatch(/\} 1$/);
    expect(scrape).toContain('mcp_audit_commit_batch_size');
  });
});
