import { Injectable } from '@nestjs/common';
import { isSupportedSessionVersion } from '../../../protocol/revisions';
import { assertKnownOptions, optionKeys } from '../../../errors/mcp-configuration.errors';
import type { McpClientAuth, McpTokenStore } from '../../auth/mcp-client-auth.interface';
import { MCP_CLIENT_TOKEN_STORE } from '../../mcp-client.constants';
import type { McpHttpServerConfig, McpServerCommonConfig } from '../../interfaces/mcp-server-config.interface';
import { HTTP_RETRY_OPTION_KEYS } from './http.options';
import type { McpTransportFactory, McpTransportFactoryContext } from '../mcp-transport-factory.interface';
import { HttpTransport } from './http.transport';

/** Builds `HttpTransport`s for server entries with a `url` (or `transport: 'http'`). */
@Injectable()
export class HttpTransportFactory implements McpTransportFactory<McpHttpServerConfig> {
  /** @inheritdoc */
  readonly transport = 'http';
  /** @inheritdoc */
  readonly routingHeaders = true;
  /** @inheritdoc */
  readonly optionKeys = optionKeys<Omit<McpHttpServerConfig, keyof McpServerCommonConfig | 'transport'>>({
    url: true,
    headers: true,
    bearerToken: true,
    auth: true,
    retry: true,
    maxResponseBytes: true,
    maxEventChars: true,
  });

  /** @inheritdoc */
  resolve(server: string, entry: Record<string, unknown>): McpHttpServerConfig {
    assertKnownOptions(entry.retry, HTTP_RETRY_OPTION_KEYS, `MCP server "${server}": option "retry"`);
    if (typeof entry.url !== 'string') throw new Error('"url" must be a string');
    let url: URL;
    try {
      url = new URL(entry.url);
    } catch {
      throw new Error(`"url" is not a valid URL: ${JSON.stringify(entry.url)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new Error(`"url" must use http or https, got ${url.protocol}`);
    const auth = entry.auth as Partial<McpClientAuth> | undefined;
    if (
      auth !== undefined &&
      typeof auth !== 'function' &&
      (typeof auth?.getToken !== 'function' || typeof auth.invalidate !== 'function')
    ) {
      throw new Error(
        '"auth" must be staticToken(token), clientCredentials({...}), an object with getToken() and invalidate(), or an injectable class with them',
      );
    }
    return entry as unknown as McpHttpServerConfig;
  }

  /** @inheritdoc */
  create(config: McpHttpServerConfig, context: McpTransportFactoryContext): HttpTransport {
    const auth = typeof config.auth === 'function' ? context.resolve<McpClientAuth>(config.auth) : config.auth;
    return new HttpTransport({
      url: config.url,
      headers: config.headers,
      bearerToken: config.bearerToken,
      ...(auth ? { auth, tokenStore: context.resolve<McpTokenStore>(MCP_CLIENT_TOKEN_STORE) } : {}),
      retry: config.retry,
      ...(config.maxResponseBytes !== undefined ? { maxResponseBytes: config.maxResponseBytes } : {}),
      ...(config.maxEventChars !== undefined ? { maxEventChars: config.maxEventChars } : {}),
      capabilities: context.clientCapabilities,
      ...(isSupportedSessionVersion(config.version) ? { protocolVersion: config.version } : {}),
    });
  }

  /** The endpoint's origin and path, without query or credentials. */
  endpointKey(config: McpHttpServerConfig): string {
    const url = new URL(config.url);
    return `http ${url.origin}${url.pathname}`;
  }
}
