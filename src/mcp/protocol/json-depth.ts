/**
 * Deepest nesting of arrays and objects a JSON-RPC message may have, counting the envelope
 * itself as level 1. Everything that walks a message recursively (validators, transformers,
 * `JSON.stringify`) stays far from the stack limit under it, and real MCP messages never come
 * close: arguments nested a hundred levels deep are an attack, not a use.
 */
export const MAX_JSON_RPC_DEPTH = 128;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when the JSON text nests arrays and objects deeper than `max` levels. One linear scan
 * that skips string contents; when the text holds no more than `max` opening brackets in all,
 * it cannot be deeper and the scan is skipped.
 */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let opening = 0;
  for (let i = text.indexOf('['); i !== -1 && opening <= max; i = text.indexOf('[', i + 1)) opening++;
  for (let i = text.indexOf('{'); i !== -1 && opening <= max; i = text.indexOf('{', i + 1)) opening++;
  if (opening <= max) return false;
  return jsonDepth(text, max) > max;
}

/** The nesting depth of JSON text, scanning no further once it exceeds `stopAbove`. */
export function jsonDepth(text: string, stopAbove = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return deepest;
}
