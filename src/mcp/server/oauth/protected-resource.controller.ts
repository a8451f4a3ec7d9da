import {
  applyDecorators,
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  Injectable,
  NotFoundException,
  Options,
  Res,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import {
  PROTECTED_RESOURCE_WELL_KNOWN,
  type McpProtectedResourceMetadata,
  type McpResolvedOAuthOptions,
} from '../config/mcp-oauth.options';
import { McpProtectedResourceMounts } from './protected-resource-mounts';

/** The one response method these controllers need; Express responses and Fastify replies both have it. */
interface HeaderSetter {
  header(name: string, value: string): unknown;
}

/** The mount's path as a well-known suffix: `/mcp` for `mcp/`, empty for the root path. */
function pathSuffix(path: string): string {
  if (path === '/' || path === '') return '';
  return path.startsWith('/') ? path.replace(/\/+$/, '') : `/${path.replace(/\/+$/, '')}`;
}

/** The headers of a metadata document: public, and readable from browsers. */
const MetadataAnswer = () =>
  applyDecorators(Header('Access-Control-Allow-Origin', '*'), Header('Content-Type', 'application/json'));

/** The answer to a CORS preflight of a metadata path. */
const PreflightAnswer = () =>
  applyDecorators(
    HttpCode(204),
    Header('Access-Control-Allow-Origin', '*'),
    Header('Access-Control-Allow-Methods', 'GET, OPTIONS'),
    Header('Access-Control-Allow-Headers', '*'),
    Header('Access-Control-Max-Age', '86400'),
  );

/** Answers a metadata GET: the document with its cache header, or 404 for a mount without `oauth`. */
function sendDocument(oauth: McpResolvedOAuthOptions | undefined, res: HeaderSetter): McpProtectedResourceMetadata {
  if (!oauth) throw new NotFoundException();
  res.header('Cache-Control', `public, max-age=${oauth.maxAgeSec}`);
  return oauth.document;
}

/**
 * Publishes the app's root metadata path, `/.well-known/oauth-protected-resource`, once per app
 * whatever the number of mounts (a router may refuse the same route twice): it describes the
 * mount at the root path if there is one with `oauth`, else the first mount registered with
 * `oauth`; 404 when no mount has it.
 */
@Controller()
export class McpProtectedResourceRootController {
  constructor(private readonly mounts: McpProtectedResourceMounts) {}

  /** The root metadata document. */
  @Get(PROTECTED_RESOURCE_WELL_KNOWN)
  @MetadataAnswer()
  get(@Res({ passthrough: true }) res: HeaderSetter): McpProtectedResourceMetadata {
    return sendDocument(this.mounts.root(), res);
  }

  /** CORS preflight of the root metadata path. */
  @Options(PROTECTED_RESOURCE_WELL_KNOWN)
  @PreflightAnswer()
  preflight(): void {
    if (!this.mounts.root()) throw new NotFoundException();
  }
}

/** Registers a mount's resolved `oauth` settings with the app's root metadata path. */
@Injectable()
export class McpProtectedResourceRegistration implements OnModuleInit {
  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly mounts: McpProtectedResourceMounts,
  ) {}

  /** @inheritdoc */
  onModuleInit(): void {
    this.mounts.add(pathSuffix(this.options.path) === '', this.options.oauth);
  }
}

/**
 * Creates the controller that publishes a mount's Protected Resource Metadata (RFC 9728) at
 * `/.well-known/oauth-protected-resource<path>` (the root variant is the app-wide
 * `McpProtectedResourceRootController`; a mount at the root path has only that one). It is public
 * (clients read it before they have a token), cacheable, and readable from browsers (CORS for
 * GET). The route exists for every mount, because with `forRootAsync` the `oauth` option is only
 * known after the module graph is built; a mount without `oauth` answers 404 there, as before.
 * Null for a mount at the root path.
 */
export function createProtectedResourceController(path: string): Type<unknown> | null {
  const suffix = pathSuffix(path);
  if (!suffix) return null;
  const route = `${PROTECTED_RESOURCE_WELL_KNOWN}${suffix}`;

  @Controller()
  class McpProtectedResourceController {
    constructor(@Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions) {}

    @Get(route)
    @MetadataAnswer()
    get(@Res({ passthrough: true }) res: HeaderSetter): McpProtectedResourceMetadata {
      return sendDocument(this.options.oauth, res);
    }

    @Options(route)
    @PreflightAnswer()
    preflight(): void {
      if (!this.options.oauth) throw new NotFoundException();
    }
  }
  return McpProtectedResourceController;
}
