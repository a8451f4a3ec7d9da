import { createHash } from 'node:crypto';

/** Longest key stored as it is; longer ones are stored as a digest. */
const MAX_PLAIN_KEY = 255;

/**
 * Fits the endpoint key a transport factory gave into the `endpoint` column: short keys are kept
 * as they are (readable in the table), longer ones become `<transport> sha256:<digest>`.
 */
export function storableEndpointKey(transport: string, key: string): string {
  if (key.length <= MAX_PLAIN_KEY) return key;
  return `${transport} sha256:${createHash('sha256').update(key).digest('hex')}`;
}
