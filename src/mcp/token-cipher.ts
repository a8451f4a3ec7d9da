import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { McpConfigurationError } from './errors/mcp-configuration.errors';

/**
 * One key of an `encryptionKeys` option (`McpClientModule`'s `oauth.encryptionKeys`,
 * `McpAuthorizationServerModule`'s `encryptionKeys`): an id (kept beside each sealed value) and 32 random bytes.
 */
export interface McpOAuthEncryptionKey {
  /** Names the key in sealed values, so older values open after a new key comes first. Letters, digits, `-` and `_`. */
  id: string;
  /** 32 bytes, base64 (44 characters) or hex (64 characters). Generate with `openssl rand -base64 32`. */
  key: string;
}

const FORMAT = 'v1';
const KEY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Who configures the keys, for the boot messages: the option as they name it (e.g.
 * `McpClientModule option "oauth.encryptionKeys"`), and the message when it is missing.
 */
export interface McpCipherOwner {
  /** The option, with its module: `<Module> option "<path>"`. */
  readonly option: string;
  /** The message when no key is configured: why keys are needed, and how to set them. */
  readonly missing: string;
}

function keyBytes(entry: McpOAuthEncryptionKey, index: number, owner: McpCipherOwner): Buffer {
  const where = `${owner.option.replace(/"$/, '')}[${index}]"`;
  if (!entry || typeof entry.id !== 'string' || !KEY_ID.test(entry.id))
    throw new McpConfigurationError(`${where} needs an "id" of letters, digits, "-" or "_" (at most 64)`);
  const text = typeof entry.key === 'string' ? entry.key.trim() : '';
  const bytes = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (bytes.length !== 32)
    throw new McpConfigurationError(
      `${where} ("${entry.id}") needs a "key" of 32 bytes, base64 or hex: generate one with \`openssl rand -base64 32\``,
    );
  return bytes;
}

/**
 * Seals secrets for the database (the client's user tokens, the authorization server's keys) with AES-256-GCM: the first key seals, every key opens (key
 * rotation: put the new key first, keep the old ones until their grants were refreshed). The
 * sealed text names its key and is bound to `context` (the row and column it belongs to), so a
 * value copied into another row does not open.
 */
export class McpTokenCipher {
  private readonly keys = new Map<string, Buffer>();
  private readonly current: string;

  /** @throws McpConfigurationError without keys, or with a key that is malformed or named twice (never quoting a key). */
  constructor(keys: readonly McpOAuthEncryptionKey[] | undefined, owner: McpCipherOwner) {
    if (!Array.isArray(keys) || keys.length === 0) throw new McpConfigurationError(owner.missing);
    const entries: readonly McpOAuthEncryptionKey[] = keys;
    entries.forEach((entry, i) => {
      const bytes = keyBytes(entry, i, owner);
      if (this.keys.has(entry.id)) throw new McpConfigurationError(`${owner.option} names the key "${entry.id}" twice`);
      this.keys.set(entry.id, bytes);
    });
    this.current = entries[0].id;
  }

  /** The id of the key that seals (the first configured). */
  get currentKeyId(): string {
    return this.current;
  }

  /** `plain` sealed under the current key, bound to `context`. */
  seal(plain: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.current) as Buffer, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [
      FORMAT,
      this.current,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      body.toString('base64url'),
    ].join(':');
  }

  /**
   * The plain text of a sealed value, or null when it does not open: its key is no longer
   * configured, it was altered, or it belongs to another row.
   */
  open(sealed: string, context: string): string | null {
    const [format, keyId, iv, tag, body] = sealed.split(':');
    const key = this.keys.get(keyId);
    if (format !== FORMAT || !key || body === undefined) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
