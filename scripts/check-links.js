#!/usr/bin/env node
// Checks the links VitePress's dead-link check does not: `npm run docs:links`, after `docs:build`.
//
// - The built site (docs/.vitepress/dist): every internal `<a href>` names a page that was built,
//   and its `#fragment`, if any, an element id of that page (a heading's anchor).
// - README.md, CONTRIBUTING.md and ARCHITECTURE.md as GitHub shows them: every `](#fragment)` names
//   a heading of the same file (GitHub's slugs), and every relative link a file of the repository.
//
// Prints each broken link with where it is, and exits 1 if there is one. Needs no network.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'docs', '.vitepress', 'dist');
const problems = [];

// ---- the built site ----------------------------------------------------------------------------

function htmlFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'assets' ? [] : htmlFiles(p);
    return e.name.endsWith('.html') ? [p] : [];
  });
}

const decode = (s) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};
const unescapeHtml = (s) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');

/** The built file a site path names (clean URLs: /a/b -> a/b.html, /a/ -> a/index.html). */
function pageFile(sitePath) {
  const clean = decode(sitePath).replace(/^\/+/, '');
  const candidates =
    clean === '' || clean.endsWith('/')
      ? [path.join(dist, clean, 'index.html')]
      : [path.join(dist, clean), path.join(dist, `${clean}.html`), path.join(dist, clean, 'index.html')];
  return candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile()) ?? null;
}

if (!fs.existsSync(dist)) {
  console.error(`No built site in ${path.relative(root, dist)}: run npm run docs:build first.`);
  process.exit(1);
}

const ids = new Map(); // html file -> Set of ids
const idsOf = (file) => {
  if (!ids.has(file)) {
    const html = fs.readFileSync(file, 'utf8');
    ids.set(file, new Set([...html.matchAll(/\sid="([^"]*)"/g)].map((m) => unescapeHtml(m[1]))));
  }
  return ids.get(file);
};

let siteLinks = 0;
for (const file of htmlFiles(dist)) {
  const html = fs.readFileSync(file, 'utf8');
  const page = path.relative(dist, file);
  for (const m of html.matchAll(/<a\s[^>]*?href="([^"]*)"/g)) {
    const href = unescapeHtml(m[1]);
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) continue; // external, mailto:
    const hash = href.indexOf('#');
    const target = hash < 0 ? href : href.slice(0, hash);
    const fragment = hash < 0 ? '' : decode(href.slice(hash + 1));
    const sitePath =
      target === ''
        ? null
        : target.startsWith('/')
          ? target
          : path.posix.join(path.posix.dirname(`/${page.split(path.sep).join('/')}`), target);
    const targetFile = sitePath === null ? file : pageFile(sitePath.split('?')[0]);
    siteLinks++;
    if (!targetFile) {
      problems.push(`site ${page}: link to ${href}: no such page`);
      continue;
    }
    if (fragment && !idsOf(targetFile).has(fragment)) {
      problems.push(`site ${page}: link to ${href}: no heading #${fragment} in ${path.relative(dist, targetFile)}`);
    }
  }
}

// ---- the repository's own markdown, as GitHub renders it ---------------------------------------

/** GitHub's heading slug: lower case, punctuation dropped (but - and _), spaces to dashes. */
function githubSlug(text) {
  return text
    .replace(/<[^>]+>/g, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

let repoLinks = 0;
for (const md of ['README.md', 'CONTRIBUTING.md', 'ARCHITECTURE.md']) {
  const file = path.join(root, md);
  if (!fs.existsSync(file)) continue;
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const slugs = new Set();
  const seen = new Map();
  let fence = null;
  const links = [];
  lines.forEach((line, i) => {
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1];
      else if (line.trim() === fence) fence = null;
      return;
    }
    if (fence !== null) return;
    const h = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = githubSlug(h[2]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      slugs.add(n === 0 ? base : `${base}-${n}`);
    }
    // Links outside code spans.
    const text = line.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push({ href: m[1], line: i + 1 });
  });
  for (const { href, line } of links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
    repoLinks++;
    const hash = href.indexOf('#');
    const target = hash < 0 ? href : href.slice(0, hash);
    const fragment = hash < 0 ? '' : decode(href.slice(hash + 1));
    if (target && !fs.existsSync(path.join(path.dirname(file), decode(target)))) {
      problems.push(`${md}:${line}: link to ${href}: no such file`);
    } else if (fragment && !target && !slugs.has(fragment)) {
      problems.push(`${md}:${line}: link to ${href}: no such heading`);
    }
  }
}

for (const p of problems) console.log(p);
console.log(
  `${siteLinks} links of the site and ${repoLinks} of the repository's markdown checked: ${problems.length} broken`,
);
process.exitCode = problems.length ? 1 : 0;
