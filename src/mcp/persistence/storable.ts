import { createHash } from 'node:crypto';
import { jsonNestsDeeperThan } from '../protocol/json-depth';
import { JsonText } from './json-text';

/**
 * Deepest nesting of arrays and objects kept as structure in a jsonb column. SQLite's JSON
 * functions refuse more than 1000 levels and PostgreSQL's parser stops at its stack limit (a few
 * tens of thousands of levels with the default `max_stack_depth`); a deeper value is stored as
 * its JSON text, a jsonb string.
 */
export const MAX_STORED_JSON_DEPTH = 512;

/** What was changed to make one row storable; it becomes part of the row's note. */
export class StorableNotes {
  private readonly changes: string[] = [];

  /** Records one change (once). */
  add(change: string): void {
    if (!this.changes.includes(change)) this.changes.push(change);
  }

  /** The note text, or null when nothing was changed. */
  text(): string | null {
    return this.changes.length ? `stored with changes: ${this.changes.join('; ')}` : null;
  }
}

/** NUL (refused in text and jsonb) and unpaired surrogates (refused in jsonb, turned into U+FFFD by the drivers). */
// eslint-disable-next-line no-control-regex -- NUL is one of the characters PostgreSQL text cannot hold
const UNSAFE_CHARACTER = /[\u0000\ud800-\udfff]/u;
// eslint-disable-next-line no-control-regex -- as above
const UNSAFE_CHARACTERS = /[\u0000\ud800-\udfff]/gu;

/** A JSON text may hold a NUL or a surrogate as an escape, or an unpaired surrogate as is. */
const UNSAFE_IN_JSON_TEXT = /\\u0000|\\u[dD][89abcdefABCDEF]|[\ud800-\udfff]/u;

const hex4 = (code: number) => code.toString(16).padStart(4, '0');

/** Replaces NUL and unpaired surrogates by their escape written out (`\u0000`, `\ud800`): six visible characters. */
function escapeCharacters(value: string): string {
  return value.replace(UNSAFE_CHARACTERS, (character) => `\\u${hex4(character.charCodeAt(0))}`);
}

/** The first `max` characters, without splitting a surrogate pair. */
function cut(value: string, max: number): string {
  const head = value.slice(0, max);
  const last = head.charCodeAt(head.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? head.slice(0, -1) : head;
}

/** A text column's value: NUL and unpaired surrogates escaped. */
export function storableText(value: string, field: string, notes: StorableNotes): string {
  if (!UNSAFE_CHARACTER.test(value)) return value;
  notes.add(`NUL characters or lone surrogates escaped in ${field}`);
  return escapeCharacters(value);
}

/** A varchar column's value: escaped as text, then cut to the column's width. */
export function storableString(value: string, max: number, field: string, notes: StorableNotes): string {
  const text = storableText(value, field, notes);
  if (text.length <= max) return text;
  notes.add(`${field} cut from ${text.length} to ${max} characters`);
  return cut(text, max);
}

/**
 * The stored form of a value rows are looked up by (a principal key, a scope key). A value that
 * fits and needs no escape is kept; any other becomes its escaped head plus `#` and a SHA-256 of
 * the original, so two different values never share a stored key (which would share sessions).
 * The same function runs on lookup, so the original value still finds its rows.
 */
export function storableKey(value: string, max: number): string {
  if (value.length <= max && !UNSAFE_CHARACTER.test(value)) return value;
  const digest = createHash('sha256').update(Buffer.from(value, 'utf16le')).digest('base64url');
  return `${cut(escapeCharacters(value), max - digest.length - 1)}#${digest}`;
}

/**
 * A jsonb column's value: an object or array walked without recursion; strings and keys with NUL
 * or unpaired surrogates escaped; nesting deeper than `MAX_STORED_JSON_DEPTH` stored as its JSON
 * text (a jsonb string). A `JsonText` is checked and rewritten as text, never parsed.
 */
export function storableJson(value: unknown, field: string, notes: StorableNotes): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof JsonText) return storableJsonText(value, field, notes);
  if (typeof value === 'string') return storableText(value, field, notes);
  if (typeof value !== 'object') return value;
  const { deep, unsafe } = inspect(value);
  if (deep) {
    notes.add(`${field} nested deeper than ${MAX_STORED_JSON_DEPTH} levels, stored as its JSON text`);
    return serialize(value);
  }
  if (!unsafe) return value;
  notes.add(`NUL characters or lone surrogates escaped in ${field}`);
  return escapeStrings(value);
}

function storableJsonText(value: JsonText, field: string, notes: StorableNotes): unknown {
  const text = value.text;
  if (jsonNestsDeeperThan(text, MAX_STORED_JSON_DEPTH)) {
    notes.add(`${field} nested deeper than ${MAX_STORED_JSON_DEPTH} levels, stored as its JSON text`);
    return escapeCharacters(text);
  }
  if (!UNSAFE_IN_JSON_TEXT.test(text)) return value;
  const rewritten = escapeJsonText(text);
  if (rewritten === text) return value;
  notes.add(`NUL characters or lone surrogates escaped in ${field}`);
  return new JsonText(rewritten);
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * Rewrites JSON text so that no string in it decodes to NUL or an unpaired surrogate: such an
 * escape (`\u0000`, a lone `\ud800`) becomes an escaped backslash followed by the same letters,
 * and a raw unpaired surrogate becomes that written-out escape. Paired surrogates, written out or
 * raw, are kept.
 */
function escapeJsonText(text: string): string {
  const out: string[] = [];
  let from = 0;
  let inString = false;
  const replace = (start: number, end: number, code: number) => {
    out.push(text.slice(from, start), `\\\\u${hex4(code)}`);
    from = end;
  };
  const escapedCode = (at: number) =>
    text.charCodeAt(at) === 0x5c && text.charCodeAt(at + 1) === 0x75 ? parseInt(text.slice(at + 2, at + 6), 16) : NaN;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!inString) {
      if (code === 0x22) inString = true;
      continue;
    }
    if (code === 0x22) {
      inString = false;
    } else if (code === 0x5c) {
      const escaped = escapedCode(i);
      if (Number.isNaN(escaped)) {
        i++; // a two-character escape: skip the escaped character
      } else if (escaped === 0 || isLow(escaped)) {
        replace(i, i + 6, escaped);
        i += 5;
      } else if (isHigh(escaped)) {
        if (isLow(escapedCode(i + 6))) i += 11;
        else {
          replace(i, i + 6, escaped);
          i += 5;
        }
      } else {
        i += 5;
      }
    } else if (isHigh(code) && isLow(text.charCodeAt(i + 1))) {
      i++;
    } else if (isHigh(code) || isLow(code)) {
      replace(i, i + 1, code);
    }
  }
  if (from === 0) return text;
  out.push(text.slice(from));
  return out.join('');
}

/** What `JSON.stringify` would see for a value: `toJSON` applied. */
function jsonView(value: unknown): unknown {
  if (value && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return (value as { toJSON(): unknown }).toJSON();
  return value;
}

function children(value: object): [string | null, unknown][] {
  return Array.isArray(value) ? value.map((item) => [null, item]) : Object.entries(value);
}

/** One pass without recursion: does the value nest too deep, does any string or key need an escape? */
function inspect(root: object): { deep: boolean; unsafe: boolean } {
  let unsafe = false;
  const seen = new Set<object>();
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length) {
    const [raw, depth] = stack.pop()!;
    const value = jsonView(raw);
    if (typeof value === 'string') {
      if (!unsafe && UNSAFE_CHARACTER.test(value)) unsafe = true;
      continue;
    }
    if (!value || typeof value !== 'object' || seen.has(value)) continue;
    if (depth > MAX_STORED_JSON_DEPTH) return { deep: true, unsafe };
    seen.add(value);
    for (const [key, child] of children(value)) {
      if (key !== null && !unsafe && UNSAFE_CHARACTER.test(key)) unsafe = true;
      stack.push([child, depth + 1]);
    }
  }
  return { deep: false, unsafe };
}

/** A copy with every string and key escaped (the value is known to nest at most `MAX_STORED_JSON_DEPTH` levels). */
function escapeStrings(raw: unknown): unknown {
  const value = jsonView(raw);
  if (typeof value === 'string') return escapeCharacters(value);
  if (!value || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => escapeStrings(item));
  const copy: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) copy[escapeCharacters(key)] = escapeStrings(child);
  return copy;
}

/**
 * JSON text of any value without recursion, as `JSON.stringify` writes it (its string escapes
 * leave no NUL or unpaired surrogate in the text). An object met a second time is written as
 * `"[Circular]"`.
 */
function serialize(root: unknown): string {
  const out: string[] = [];
  const seen = new WeakSet<object>();
  const tasks: ({ text: string } | { value: unknown })[] = [{ value: root }];
  while (tasks.length) {
    const task = tasks.pop()!;
    if ('text' in task) {
      out.push(task.text);
      continue;
    }
    const value = jsonView(task.value);
    if (value === null || typeof value !== 'object') {
      const scalar = typeof value === 'bigint' ? JSON.stringify(String(value)) : JSON.stringify(value);
      out.push(scalar === undefined ? 'null' : scalar);
      continue;
    }
    if (seen.has(value)) {
      out.push('"[Circular]"');
      continue;
    }
    seen.add(value);
    const array = Array.isArray(value);
    const entries = children(value).filter(
      ([key, child]) =>
        key === null || (child !== undefined && typeof child !== 'function' && typeof child !== 'symbol'),
    );
    const pending: typeof tasks = [{ text: array ? '[' : '{' }];
    entries.forEach(([key, child], index) => {
      if (index) pending.push({ text: ',' });
      if (key !== null) pending.push({ text: `${JSON.stringify(key)}:` });
      pending.push({ value: child });
    });
    pending.push({ text: array ? ']' : '}' });
    for (let i = pending.length - 1; i >= 0; i--) tasks.push(pending[i]);
  }
  return out.join('');
}
