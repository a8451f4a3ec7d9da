import { createHash } from 'node:crypto';
import { MCP_COLUMN_LENGTHS } from '../../persistence/mcp-columns.constants';

/**
 * Fits the endpoint key a transport factory gave into the `endpoint` column: short keys are kept
 * as they are (readable in the table), longer ones become `<transport> sha256:<digest>`.
 */
export function storableEndpointKey(transport: string, key: string): string {
  if (key.length <= MCP_COLUMN_LENGTHS.endpoint) return key;
  return `${transport} sha256:${createHash('sha256').update(key).digest('hex')}`;
}
