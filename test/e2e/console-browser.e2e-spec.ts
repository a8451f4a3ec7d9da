import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { freeLoopbackPort, spawnReady, TS_REGISTER, type ReadyChild } from '../support/child-process';
import { HTTP_ADAPTERS } from '../support/http-app';
import { pollUntil } from '../support/polling';

jest.setTimeout(120_000);

const ROOT = join(__dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const describeWithChromium = existsSync(CHROMIUM) ? describe : describe.skip;
if (!existsSync(CHROMIUM)) {
  // .ci/run installs it; a machine without it skips this suite and says so.
  console.warn(
    `console-browser: ${CHROMIUM} is missing, the browser suite is skipped (apt-get install -y --no-install-recommends chromium)`,
  );
}

/**
 * The console of the example app (`src/main.ts` in its own process, SQLite, MCP_TOKENS, both
 * principals console administrators) in a real headless Chromium after real SDK calls, on each
 * HTTP adapter: the pages render, uPlot draws its canvas, the strict Content-Security-Policy
 * reports no violation, and the browser reports no error and no failed request (each named by
 * its URL), the icon included.
 */
describeWithChromium.each(HTTP_ADAPTERS)(
  'the audit console in headless Chromium (example app, HTTP_ADAPTER=%s)',
  (adapter) => {
    // The Express run's screenshot is the one the console's docs page shows.
    const screenshot = join(ROOT, 'artifacts', adapter === 'express' ? 'console.png' : `console-${adapter}.png`);
    // Made in beforeAll, not while Jest collects the file: a skipped or filtered-out run makes none.
    let workdir: string | undefined;
    let app: ReadyChild | undefined;
    let origin: string;
    let browser: Browser | undefined;
    let context: BrowserContext | undefined;

    beforeAll(async () => {
      workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-console-browser-'));
      const port = await freeLoopbackPort();
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        MCP_TOKENS: 'alice=token-a,bob=token-b',
        MCP_CONSOLE_ADMINS: 'alice,bob',
        HOST: '127.0.0.1',
        PORT: String(port),
        TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
      };
      delete env.DATABASE_URL;
      delete env.REDIS_URL;
      env.HTTP_ADAPTER = adapter;
      app = await spawnReady(
        process.execPath,
        ['-r', TS_REGISTER, join(ROOT, 'src', 'main.ts')],
        { cwd: workdir, env },
        /MCP endpoint: (\S+) .*HTTP on (\w+)/,
      );
      expect(app.ready[2]).toBe(adapter);
      const url = new URL(app.ready[1]);
      origin = url.origin;
      const client = new Client({ name: 'browser-e2e', version: '2.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: 'Bearer token-a' } } }),
      );
      await client.callTool({ name: 'echo', arguments: { text: '<img src=x onerror=alert(1)>' } });
      await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      await client.callTool({ name: 'fail', arguments: { reason: 'on purpose' } });
      await client.close();

      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
    });

    afterAll(async () => {
      await context?.close();
      await browser?.close();
      await app?.stop();
      if (workdir) rmSync(workdir, { recursive: true, force: true });
    });

    /** A page of a fresh context (with or without the bearer header) that records console errors, page errors and CSP violations. */
    async function openPage(
      headers?: Record<string, string>,
      httpCredentials?: { username: string; password: string },
    ) {
      await context?.close();
      context = await browser!.newContext({
        extraHTTPHeaders: headers,
        httpCredentials,
        viewport: { width: 1280, height: 800 },
      });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        // A failed load's message does not name the resource; its location does.
        const at = message.location().url;
        if (message.type() === 'error' || message.type() === 'warning')
          problems.push(`console ${message.type()}: ${message.text()}${at ? ` (${at})` : ''}`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('requestfailed', (request) =>
        problems.push(
          `request failed: ${request.method()} ${request.url()}: ${request.failure()?.errorText ?? 'unknown error'}`,
        ),
      );
      page.on('response', (response) => {
        if (response.status() >= 400)
          problems.push(`response ${response.status()}: ${response.request().method()} ${response.url()}`);
      });
      // Page-side code is given as text: the spec's compiler settings have no DOM types.
      await page.addInitScript({
        content: `document.addEventListener('securitypolicyviolation', (event) => { (window.__csp ??= []).push(event.violatedDirective + ' ' + event.blockedURI); });`,
      });
      const violations = async () => page.evaluate<string[]>(`window.__csp ?? []`);
      return { page, problems, violations };
    }

    it('refuses a browser without the token with a Basic challenge, and lets it sign in with the token as Basic password', async () => {
      await openPage();
      const refused = await context!.request.get(`${origin}/mcp-console/sessions`);
      expect(refused.status()).toBe(401);
      expect(refused.headers()['www-authenticate']).toBe('Basic realm="mcp-console", charset="UTF-8"');
      expect(await refused.text()).not.toContain('browser-e2e');

      const { page } = await openPage(undefined, { username: 'ops', password: 'token-b' });
      const response = await page.goto(`${origin}/mcp-console/sessions`);
      expect(response?.status()).toBe(200);
      expect(await page.locator('table#sessions').innerText()).toContain('browser-e2e');
    });

    it('shows the sessions, the events with the called tools, and draws the chart with no CSP violation', async () => {
      const { page, problems, violations } = await openPage({ Authorization: 'Bearer token-a' });

      await page.goto(`${origin}/mcp-console/sessions`);
      const sessionRows = page.locator('table#sessions tbody tr');
      // The only session of the suite is the browser-e2e client's.
      expect(await sessionRows.count()).toBe(1);
      const ours = page.locator('table#sessions tbody tr', { hasText: 'browser-e2e' });
      expect(await ours.count()).toBe(1);
      expect(await ours.innerText()).toMatch(/alice\s+browser-e2e 2\.0\.0\s+2025-11-25/);

      await page.goto(`${origin}/mcp-console/events?tool=echo`);
      const echo = page.locator('table#events tbody tr');
      expect(await echo.count()).toBe(1);
      expect(await echo.locator('td.tool').innerText()).toBe('echo');
      await echo.locator('summary').click();
      // The argument is text on the page, never markup: no <img> was created from it.
      expect(await echo.locator('pre').first().innerText()).toContain('<img src=x onerror=alert(1)>');
      expect(await page.locator('img').count()).toBe(0);

      await page.goto(`${origin}/mcp-console/events`);
      await page.selectOption('select[name="status"]', 'error');
      await Promise.all([page.waitForURL(/status=error/), page.click('form.filters button[type="submit"]')]);
      const failed = page.locator('table#events tbody tr');
      expect(await failed.count()).toBe(1);
      expect(await failed.locator('td.tool').innerText()).toBe('fail');

      await page.goto(`${origin}/mcp-console`);
      await page.waitForSelector('#mcp-chart[data-chart="ready"] canvas');
      const size = await page.evaluate<{ width: number; height: number; legend: string }>(
        `(() => { const canvas = document.querySelector('#mcp-chart canvas'); return { width: canvas.width, height: canvas.height, legend: document.querySelector('#mcp-chart .u-legend')?.textContent ?? '' }; })()`,
      );
      expect(size.width).toBeGreaterThan(0);
      expect(size.height).toBeGreaterThan(0);
      expect(size.legend).toContain('requests / min');
      expect(size.legend).toContain('p95 ms');

      mkdirSync(join(ROOT, 'artifacts'), { recursive: true });
      await page.screenshot({ path: screenshot, fullPage: true });
      console.log(`console screenshot: ${screenshot}`);

      expect(await violations()).toEqual([]);
      expect(problems).toEqual([]);

      // The detector is live: an inline style attribute, which the policy forbids, is reported.
      await page.evaluate(`document.body.setAttribute('style', 'color: red')`);
      await pollUntil('the CSP violation of an inline style', async () =>
        (await violations()).some((v) => v.startsWith('style-src')) ? true : undefined,
      );
    });
  },
);
