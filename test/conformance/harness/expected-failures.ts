import { readFileSync } from 'node:fs';

/** One entry of an expected-failures file: a scenario that fails today, and why. */
export interface ExpectedFailure {
  scenario: string;
  reason: string;
}

/**
 * Reads an expected-failures file in the format the conformance CLI takes (`server:` / `client:`
 * lists of scenario names), insisting that every entry carries a `# reason` comment: a baseline
 * entry nobody can explain is a regression waiting to be forgotten.
 */
export function readExpectedFailures(file: string, mode: 'server' | 'client'): ExpectedFailure[] {
  const entries: ExpectedFailure[] = [];
  let section: string | null = null;
  let pendingComment: string[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, index) => {
      const where = `${file}:${index + 1}`;
      const trimmed = line.trim();
      if (!trimmed) {
        pendingComment = [];
        return;
      }
      if (trimmed.startsWith('#')) {
        pendingComment.push(trimmed.replace(/^#+\s*/, ''));
        return;
      }
      const key = /^([a-z]+):\s*(\[\s*\])?\s*(#.*)?$/.exec(line);
      if (key) {
        section = key[1];
        pendingComment = [];
        if (section !== 'server' && section !== 'client')
          throw new Error(`${where}: unknown key "${section}" (expected server or client)`);
        return;
      }
      const item = /^\s+-\s+([^\s#]+)\s*(?:#\s*(.*))?$/.exec(line);
      if (!item || !section) throw new Error(`${where}: expected "  - <scenario>  # reason", got: ${line}`);
      const reason = [...pendingComment, item[2] ?? ''].filter(Boolean).join(' ');
      pendingComment = [];
      if (!reason)
        throw new Error(`${where}: "${item[1]}" has no reason; add a "# why it fails / what it waits on" comment`);
      if (section === mode) entries.push({ scenario: item[1], reason });
    });
  const seen = new Set<string>();
  for (const { scenario } of entries) {
    if (seen.has(scenario)) throw new Error(`${file}: "${scenario}" is listed twice`);
    seen.add(scenario);
  }
  return entries;
}
