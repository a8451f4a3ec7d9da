import { readFileSync } from 'node:fs';

/** A static file the console serves under `<path>/assets/`. */
export interface ConsoleAsset {
  /** The `Content-Type` it is served with. */
  contentType: string;
  /** Its bytes. */
  body: string;
}

/** The console's own stylesheet (served, so the CSP needs no inline styles). */
const CONSOLE_CSS = `
:root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 14px; }
body { margin: 0; background: #f6f7f9; color: #1f2933; }
header { display: flex; align-items: baseline; gap: 2rem; padding: .75rem 1.5rem; background: #1f2933; color: #fff; }
header h1 { font-size: 1.1rem; margin: 0; }
header nav a { color: #cbd2d9; margin-right: 1.25rem; text-decoration: none; }
header nav a[aria-current="page"] { color: #fff; font-weight: 600; border-bottom: 2px solid #60a5fa; }
main { padding: 1rem 1.5rem 2rem; }
h2 { font-size: 1.05rem; margin: .5rem 0 1rem; }
table { border-collapse: collapse; width: 100%; background: #fff; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #e4e7eb; vertical-align: top; }
th { background: #eef1f4; font-weight: 600; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
pre { background: #f3f4f6; padding: .5rem; margin: .25rem 0; max-height: 24rem; overflow: auto; white-space: pre-wrap; word-break: break-all; }
details summary { cursor: pointer; color: #2563eb; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: .6rem; font-size: 12px; }
.ok, .live, .completed { background: #dcfce7; color: #166534; }
.error, .failed, .expired { background: #fee2e2; color: #991b1b; }
.ended, .cancelled { background: #e5e7eb; color: #374151; }
.working, .input_required { background: #dbeafe; color: #1e40af; }
form.filters { display: flex; flex-wrap: wrap; gap: .75rem; align-items: end; margin-bottom: 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: #52606d; gap: .2rem; }
form.filters input, form.filters select { padding: .3rem; border: 1px solid #cbd2d9; border-radius: 4px; }
form.filters button { padding: .35rem .9rem; }
.pager { margin: 1rem 0; display: flex; gap: 1.5rem; }
.muted { color: #7b8794; }
.notice { background: #fef3c7; border: 1px solid #f59e0b; padding: .5rem .75rem; margin-bottom: 1rem; }
.problem { background: #fee2e2; border: 1px solid #ef4444; padding: .5rem .75rem; margin-bottom: 1rem; }
#mcp-chart { background: #fff; padding: .5rem; min-height: 340px; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; background: #fff; padding: .75rem; }
dl.fields dt { color: #52606d; }
dl.fields dd { margin: 0; }
`;

/**
 * Draws the chart from the page's JSON island with uPlot: requests and failures per minute on the left
 * axis, p50 and p95 latency on the right, times in UTC. A served file, not an inline script:
 * the page's Content-Security-Policy allows scripts from the console's own origin only.
 */
const CONSOLE_CHART_JS = `(function () {
  'use strict';
  var island = document.getElementById('mcp-chart-data');
  var target = document.getElementById('mcp-chart');
  if (!island || !target || typeof uPlot !== 'function') return;
  var data = JSON.parse(island.textContent || '{}');
  function width() { return Math.max(320, (target.clientWidth || 900) - 16); }
  var options = {
    title: 'Requests per minute and latency, last hour (UTC)',
    width: width(),
    height: 320,
    tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'); },
    scales: { x: { time: true }, n: { auto: true, range: function (u, min, max) { return [0, Math.max(1, max)]; } }, ms: { auto: true } },
    series: [
      {},
      { label: 'requests / min', scale: 'n', stroke: '#2563eb', width: 2, fill: 'rgba(37, 99, 235, 0.12)' },
      { label: 'failed / min', scale: 'n', stroke: '#f59e0b', width: 2 },
      { label: 'p50 ms', scale: 'ms', stroke: '#16a34a', width: 2 },
      { label: 'p95 ms', scale: 'ms', stroke: '#dc2626', width: 2 }
    ],
    axes: [
      {},
      { scale: 'n', label: 'requests' },
      { scale: 'ms', side: 1, label: 'ms', grid: { show: false } }
    ]
  };
  var plot = new uPlot(options, [data.t || [], data.count || [], data.errors || [], data.p50 || [], data.p95 || []], target);
  target.setAttribute('data-chart', 'ready');
  window.addEventListener('resize', function () { plot.setSize({ width: width(), height: 320 }); });
})();
`;

function uplotFile(name: string): string {
  return readFileSync(require.resolve(`uplot/dist/${name}`), 'utf8');
}

let assets: Map<string, ConsoleAsset> | undefined;

/**
 * The files under `<path>/assets/`: uPlot's browser build and stylesheet, read once from the
 * installed `uplot` package, and the console's own stylesheet and chart script.
 */
export function consoleAssets(): Map<string, ConsoleAsset> {
  assets ??= new Map<string, ConsoleAsset>([
    ['uPlot.iife.min.js', { contentType: 'text/javascript; charset=utf-8', body: uplotFile('uPlot.iife.min.js') }],
    ['uPlot.min.css', { contentType: 'text/css; charset=utf-8', body: uplotFile('uPlot.min.css') }],
    ['console.css', { contentType: 'text/css; charset=utf-8', body: CONSOLE_CSS }],
    ['console-chart.js', { contentType: 'text/javascript; charset=utf-8', body: CONSOLE_CHART_JS }],
  ]);
  return assets;
}
