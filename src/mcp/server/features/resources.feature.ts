import { Inject, Injectable } from '@nestjs/common';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import { duplicateResourceMessage } from '../../mcp.messages';
import type { McpResolvedOptions } from '../config/mcp.options';
import type { JsonRpcRequest } from '../../protocol/jsonrpc';
import { isSupportedSessionVersion } from '../../protocol/revisions';
import { McpMethod } from '../../protocol/mcp-methods';
import { Toolset } from '../dispatch/toolset';
import { MCP_COLUMN_LENGTHS } from '../../persistence/mcp-columns.constants';
import { invalidParams, requireStringParam, runFeatureHandler } from './feature-handler';
import { GuardedList, isVisibleTo } from './guarded-handlers';
import { McpRefusedError, refusalNote } from '../pipeline/handler-refusal';
import type { RegisteredResource, RegisteredResourceTemplate } from './registered-features';
import { HandlerCatalog } from '../pipeline/handler-catalog';
import { toReadResourceResult } from './resource-contents-mapper';

/**
 * Longest URI `resources/read` accepts: the width subscriptions store URIs in, so a URI that can
 * be read can also be subscribed to. It also bounds the work of matching templates and the size
 * of a "not found" message, which echoes the URI.
 */
const MAX_READ_URI_LENGTH = MCP_COLUMN_LENGTHS.subscriptionUri;

/** "Resource not found" before 2026-07-28 (the session revisions). */
const RESOURCE_NOT_FOUND_CODE = -32002;

/** "Resource not found" from 2026-07-28 on: Invalid Params. */
const STATELESS_RESOURCE_NOT_FOUND_CODE = -32602;

/** The not-found error of the request's revision, with the URI in `data`. */
export function resourceNotFound(uri: string, protocolVersion: string): McpRpcError {
  const code = isSupportedSessionVersion(protocolVersion) ? RESOURCE_NOT_FOUND_CODE : STATELESS_RESOURCE_NOT_FOUND_CODE;
  return new McpRpcError(code, `Resource not found: ${uri}`, { uri });
}

/**
 * The resources and resource templates of one mount: `resources/list`,
 * `resources/templates/list` and `resources/read`. Fixed URIs win over templates; templates are
 * tried in registration order.
 */
@Injectable()
export class ResourcesFeature {
  private readonly resources = new HandlerCatalog<RegisteredResource>(
    (resource) => resource.uri,
    (uri, first, second) => duplicateResourceMessage(this.options.mount, uri, first, second),
    () => this.rebuild(),
  );
  private readonly templates = new HandlerCatalog<RegisteredResourceTemplate>(
    (template) => template.template.template,
    (uriTemplate, first, second) => duplicateResourceMessage(this.options.mount, uriTemplate, first, second),
    () => this.rebuild(),
  );
  private lists: {
    resources: GuardedList<RegisteredResource>;
    templates: GuardedList<RegisteredResourceTemplate>;
  } | null = null;

  constructor(
    private readonly toolset: Toolset,
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
  ) {}

  /** Adds a resource; a second one with the same URI is a boot error naming both owners. */
  addResource(resource: RegisteredResource): void {
    this.resources.add(resource);
  }

  /** Removes a resource (`McpRegistry`); false when there was none at that URI. */
  removeResource(uri: string): boolean {
    return this.resources.remove(uri) !== undefined;
  }

  /** Removes a template (`McpRegistry`); false when there was none with that template string. */
  removeTemplate(uriTemplate: string): boolean {
    return this.templates.remove(uriTemplate) !== undefined;
  }

  /** True once the resource methods are served. */
  get installed(): boolean {
    return this.lists !== null;
  }

  /** Adds a template; a second one with the same template string is a boot error. */
  addTemplate(template: RegisteredResourceTemplate): void {
    this.templates.add(template);
  }

  /** The template published under `uriTemplate`, if any (completion references). */
  findTemplate(uriTemplate: string): RegisteredResourceTemplate | undefined {
    return this.templates.get(uriTemplate);
  }

  /** True when `uri` is a registered resource or matches a template. */
  exists(uri: string): boolean {
    return this.resolve(uri) !== null;
  }

  /** True when `uri` exists and its guards let the caller see it (subscriptions). */
  async existsFor(uri: string, context: McpDeliveryContext, method: string): Promise<boolean> {
    const target = this.resolve(uri);
    return !!target && (await this.visibleEntry(target.entry, context, method));
  }

  /**
   * The URIs of `uris` the caller may see, in order: those that exist, are switched on for it and
   * that its guards let through (as `existsFor`, each resource or template asked once however
   * many URIs it serves). The others are left out alike, so the caller cannot tell a hidden
   * resource from one that does not exist (`subscriptions/listen`).
   */
  async visibleUris(uris: readonly string[], context: McpDeliveryContext, method: string): Promise<string[]> {
    const verdicts = new Map<RegisteredResource | RegisteredResourceTemplate, Promise<boolean>>();
    const visible = await Promise.all(
      uris.map((uri) => {
        const entry = this.resolve(uri)?.entry;
        if (!entry) return Promise.resolve(false);
        let verdict = verdicts.get(entry);
        if (!verdict) verdicts.set(entry, (verdict = this.visibleEntry(entry, context, method)));
        return verdict;
      }),
    );
    return uris.filter((_, index) => visible[index]);
  }

  /**
   * True while `uri` exists and is switched on for `principal`: asked before each update a listen
   * stream carries (the guards were asked when it opened), so a switch turned off later hides the
   * resource's updates too.
   */
  switchedOnFor(uri: string, principal: McpPrincipal): boolean {
    const target = this.resolve(uri);
    return !!target && this.switchedOn(target.entry, { principal });
  }

  /**
   * The test a session subscriber of `uri` must pass for an update to be announced to it, or null
   * when `uri` is no longer a resource (nobody hears of it). The URI is resolved once however many
   * subscribers are asked; each answer reads the in-memory switches only (the guards were asked
   * at `resources/subscribe`), so a switch turned off later hides the resource's updates too.
   */
  updateGateFor(uri: string): ((principal: McpPrincipal) => boolean) | null {
    const target = this.resolve(uri);
    if (!target) return null;
    return (principal) => this.switchedOn(target.entry, { principal });
  }

  private async visibleEntry(
    entry: RegisteredResource | RegisteredResourceTemplate,
    context: McpDeliveryContext,
    method: string,
  ): Promise<boolean> {
    if (!this.switchedOn(entry, context)) return false;
    return 'uri' in entry
      ? isVisibleTo(entry.pipeline, method, 'resource', entry.uri, context)
      : isVisibleTo(entry.pipeline, method, 'resourceTemplate', entry.template.template, context);
  }

  /** True when no resource and no template was registered. */
  get isEmpty(): boolean {
    return !this.resources.size && !this.templates.size;
  }

  /**
   * Computes the lists once, starts serving the resource methods and announces the `resources`
   * capability (with subscriptions, served by `ResourceSubscriptionsFeature`).
   */
  install(): void {
    if (this.lists) return;
    this.toolset.declareCapability('resources', { subscribe: true, listChanged: true });
    this.lists = this.buildLists();
    const lists = () => this.lists as NonNullable<ResourcesFeature['lists']>;
    this.toolset.handle(McpMethod.ResourcesList, (request, context) =>
      lists().resources.page(request.params?.cursor, context),
    );
    this.toolset.handle(McpMethod.ResourcesTemplatesList, (request, context) =>
      lists().templates.page(request.params?.cursor, context),
    );
    this.toolset.handle(McpMethod.ResourcesRead, (request, context) => this.read(request, context));
  }

  private buildLists(): NonNullable<ResourcesFeature['lists']> {
    const pageSize = this.options.pageSize;
    const switches = this.toolset.switches;
    return {
      resources: new GuardedList(
        'resources',
        [...this.resources.values()],
        pageSize,
        McpMethod.ResourcesList,
        (r) => ({ kind: 'resource', name: r.uri }),
        switches,
      ),
      templates: new GuardedList(
        'resourceTemplates',
        [...this.templates.values()],
        pageSize,
        McpMethod.ResourcesTemplatesList,
        (t) => ({ kind: 'resourceTemplate', name: t.template.template }),
        switches,
      ),
    };
  }

  private rebuild(): void {
    if (this.lists) this.lists = this.buildLists();
  }

  /** False when `McpRegistry` switched the resource (or its template) off for the caller. */
  private switchedOn(
    entry: RegisteredResource | RegisteredResourceTemplate,
    context: Pick<McpDeliveryContext, 'principal'>,
  ): boolean {
    const key = context.principal;
    return 'uri' in entry
      ? this.toolset.switches.allows('resource', entry.uri, key)
      : this.toolset.switches.allows('resourceTemplate', entry.template.template, key);
  }

  private async read(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    const uri = requireStringParam(request, 'uri');
    if (uri.length > MAX_READ_URI_LENGTH)
      throw invalidParams(`Invalid params: "uri" is longer than ${MAX_READ_URI_LENGTH} characters`);
    const target = this.resolve(uri);
    if (!target) throw resourceNotFound(uri, context.protocolVersion);
    const { entry, params } = target;
    if (!this.switchedOn(entry, context)) {
      const notFound = resourceNotFound(uri, context.protocolVersion);
      throw new McpRefusedError(
        notFound.code,
        notFound.message,
        refusalNote(`resource "${uri}"`, 'McpRegistry', new Error('disabled')),
        notFound.data,
      );
    }
    const variables = await this.checkedVariables(entry, uri, params);
    const result = await runFeatureHandler(this.toolset, request, context, async (handlerContext) =>
      toReadResourceResult(await entry.read({ uri, params: variables }, handlerContext), uri, entry.mimeType),
    );
    if (!result) throw resourceNotFound(uri, context.protocolVersion);
    return result;
  }

  /** The variables of a URI as the template's `variables` schema parses them; -32602 when it rejects them. */
  private async checkedVariables(
    entry: RegisteredResource | RegisteredResourceTemplate,
    uri: string,
    params: Record<string, string>,
  ): Promise<Record<string, string>> {
    if (!('validateVariables' in entry) || !entry.validateVariables) return params;
    const outcome = await entry.validateVariables(params);
    if (!outcome.ok) throw invalidParams(`Invalid params: the variables of "${uri}" are not valid: ${outcome.message}`);
    return outcome.value as Record<string, string>;
  }

  private resolve(
    uri: string,
  ): { entry: RegisteredResource | RegisteredResourceTemplate; params: Record<string, string> } | null {
    const fixed = this.resources.get(uri);
    if (fixed) return { entry: fixed, params: {} };
    for (const template of this.templates.values()) {
      const params = template.template.match(uri);
      if (params) return { entry: template, params };
    }
    return null;
  }
}
