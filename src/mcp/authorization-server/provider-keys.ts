import { randomBytes } from 'node:crypto';
import type { JWK } from 'jose';
import type { DataSource } from 'typeorm';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { McpOAuthProviderRecord } from '../persistence/entities/oauth-provider-record.entity';
import { loadJose } from '../server/oauth/jose-loader';
import type { McpTokenCipher } from '../token-cipher';

/** One signing key: its private JWK and when it starts signing. */
export interface StoredSigningKey {
  jwk: JWK;
  /** Epoch milliseconds from which it signs; before that it is only published. */
  activeFromMs: number;
}

/** What every replica shares to act as one authorization server: its signing keys and cookie keys. */
export interface ProviderKeys {
  keys: StoredSigningKey[];
  /** Keys of oidc-provider's signed cookies, newest first. */
  cookieKeys: string[];
}

/** The row the keys live in, beside the adapter's rows (a model of its own no adapter reads). */
const KEYS_ROW = { model: 'McpProviderKeys', id: 'keys' } as const;

/** What the sealed text is bound to: it opens in this row only. */
const SEAL_CONTEXT = `${KEYS_ROW.model}\0${KEYS_ROW.id}`;

/** The row's payload: the keys sealed, since whoever reads them can mint tokens every mount accepts. */
interface SealedKeysPayload {
  sealed: string;
}

function sealKeys(cipher: McpTokenCipher, keys: ProviderKeys): string {
  return JSON.stringify({ sealed: cipher.seal(JSON.stringify(keys), SEAL_CONTEXT) } satisfies SealedKeysPayload);
}

/** The keys of the row's payload, or a boot error saying why they do not open (never quoting them). */
function openKeys(cipher: McpTokenCipher, payload: string): ProviderKeys {
  let sealed: unknown;
  try {
    sealed = (JSON.parse(payload) as Partial<SealedKeysPayload>).sealed;
  } catch {
    sealed = undefined;
  }
  const plain = typeof sealed === 'string' ? cipher.open(sealed, SEAL_CONTEXT) : null;
  if (plain === null) {
    const keyId = typeof sealed === 'string' ? sealed.split(':')[1] : undefined;
    throw new McpConfigurationError(
      'McpAuthorizationServerModule: the signing keys in mcp_oauth_provider_records do not open with the configured "encryptionKeys"' +
        (keyId ? ` (they were sealed with the key "${keyId}")` : ' (the row is not sealed)') +
        ': give every replica the same encryptionKeys, and keep an old key in the list, after the new one, until the keys were sealed again.',
    );
  }
  return JSON.parse(plain) as ProviderKeys;
}

async function newSigningKey(activeFromMs: number): Promise<StoredSigningKey> {
  const jose = loadJose('McpAuthorizationServerModule');
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = {
    ...(await jose.exportJWK(privateKey)),
    kid: randomBytes(12).toString('base64url'),
    alg: 'RS256',
    use: 'sig',
  };
  return { jwk, activeFromMs };
}

/**
 * The shared keys, made by the first replica that boots: each replica inserts its own candidate
 * unless a row is there, then reads the row, so all of them sign and verify with the same keys.
 * The row holds them sealed with `cipher`; keys sealed with an older encryption key are sealed
 * again with the current one, so the older key can leave the configuration.
 * @throws McpConfigurationError when the row does not open with the configured keys
 */
export async function loadProviderKeys(
  dataSource: DataSource,
  cipher: McpTokenCipher,
  nowMs: number,
): Promise<{ keys: ProviderKeys; text: string }> {
  const rows = dataSource.getRepository(McpOAuthProviderRecord);
  const existing = await rows.findOneBy(KEYS_ROW);
  if (existing) {
    const keys = openKeys(cipher, existing.payload);
    if (sealedWith(existing.payload) === cipher.currentKeyId) return { keys, text: existing.payload };
    // Sealed with an older key: seal again (one replica wins; the others read its row).
    await saveProviderKeys(dataSource, cipher, existing.payload, keys);
    const row = await rows.findOneByOrFail(KEYS_ROW);
    return { keys: openKeys(cipher, row.payload), text: row.payload };
  }
  const candidate: ProviderKeys = {
    keys: [await newSigningKey(nowMs)],
    cookieKeys: [randomBytes(32).toString('base64url')],
  };
  await rows
    .createQueryBuilder()
    .insert()
    .values({
      ...KEYS_ROW,
      payload: sealKeys(cipher, candidate),
      grantId: null,
      userCode: null,
      uid: null,
      expiresAt: null,
      consumedAt: null,
    })
    .orIgnore()
    .execute();
  const row = await rows.findOneByOrFail(KEYS_ROW);
  return { keys: openKeys(cipher, row.payload), text: row.payload };
}

/** The id of the encryption key a payload was sealed with. */
function sealedWith(payload: string): string | undefined {
  return (JSON.parse(payload) as SealedKeysPayload).sealed.split(':')[1];
}

/** The key that signs at `nowMs`: the newest one already active. */
export function signingKey(keys: ProviderKeys, nowMs: number): StoredSigningKey {
  const active = keys.keys.filter((key) => key.activeFromMs <= nowMs).sort((a, b) => b.activeFromMs - a.activeFromMs);
  return active[0] ?? keys.keys[0];
}

/** The keys in the order oidc-provider picks from: the signing key first, then the published ones. */
export function providerJwks(keys: ProviderKeys, nowMs: number): { keys: JWK[] } {
  const signer = signingKey(keys, nowMs);
  return { keys: [signer.jwk, ...keys.keys.filter((key) => key !== signer).map((key) => key.jwk)] };
}

/**
 * One step of rotation at `nowMs`, or null when nothing changes. A new key is added once the
 * signing key is `rotationMs - tokenTtlMs` old, to sign from `tokenTtlMs` later (verifiers see it
 * in the JWKS before any token names it); a key whose successor has signed for `tokenTtlMs` (every
 * token it signed has expired) is dropped.
 */
export async function rotatedKeys(
  keys: ProviderKeys,
  nowMs: number,
  rotationMs: number,
  tokenTtlMs: number,
): Promise<ProviderKeys | null> {
  const signer = signingKey(keys, nowMs);
  const pending = keys.keys.some((key) => key.activeFromMs > nowMs);
  const added =
    !pending && nowMs >= signer.activeFromMs + rotationMs - tokenTtlMs ? [await newSigningKey(nowMs + tokenTtlMs)] : [];
  const kept = keys.keys.filter(
    (key) =>
      key.activeFromMs >= signer.activeFromMs ||
      // An older key stays while a token it signed may still be valid.
      signer.activeFromMs + tokenTtlMs > nowMs,
  );
  if (added.length === 0 && kept.length === keys.keys.length) return null;
  return { ...keys, keys: [...kept, ...added] };
}

/**
 * Writes `next` over the keys read as `previousText`, unless another replica changed them in
 * between; returns whether this write won (the loser reads the winner's keys next time).
 */
export async function saveProviderKeys(
  dataSource: DataSource,
  cipher: McpTokenCipher,
  previousText: string,
  next: ProviderKeys,
): Promise<boolean> {
  const result = await dataSource
    .getRepository(McpOAuthProviderRecord)
    .update({ ...KEYS_ROW, payload: previousText }, { payload: sealKeys(cipher, next) });
  return (result.affected ?? 0) > 0;
}
