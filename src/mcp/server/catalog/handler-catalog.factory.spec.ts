import 'reflect-metadata';
import { IsString } from 'class-validator';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpToolMetadata } from '../../interfaces/mcp-tool-options.interface';
import { buildPromptEntry, buildResourceEntry, buildTemplateEntry, buildToolEntry } from './handler-catalog.factory';

const DECORATED = 'Weather#forecast';
const RUNTIME = 'McpRegistry#addTool(forecast)';

class CityDto {
  @IsString()
  city!: string;
}

const headerTool = (property: Record<string, unknown>): McpToolMetadata => ({
  name: 'forecast',
  description: 'Forecasts',
  input: { type: 'object', properties: { region: property } },
});

/** The error `fn` throws, which must be an `McpConfigurationError`. */
function configurationError(fn: () => unknown): McpConfigurationError {
  let thrown: unknown = new Error('expected an McpConfigurationError');
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(McpConfigurationError);
  return thrown as McpConfigurationError;
}

/** One builder for decorated handlers and runtime ones: the same checks and definitions, only the owner differs. */
describe('handler-catalog builder', () => {
  describe('buildToolEntry', () => {
    it('builds the same definition and flags for a decorated and a runtime declaration', () => {
      const declaration: McpToolMetadata = {
        name: 'forecast',
        title: 'Forecast',
        description: 'Forecasts',
        input: CityDto,
        output: { type: 'object', properties: { text: { type: 'string' } } },
        annotations: { idempotentHint: true },
        icons: [{ src: 'https://example.com/i.png' }],
        meta: { team: 'weather' },
        task: 'optional',
        inputBeforeTask: true,
      };
      const decorated = buildToolEntry(declaration, DECORATED);
      const runtime = buildToolEntry(declaration, RUNTIME);
      expect(runtime.definition).toEqual(decorated.definition);
      expect(decorated.definition).toEqual({
        name: 'forecast',
        title: 'Forecast',
        description: 'Forecasts',
        inputSchema: expect.objectContaining({ type: 'object', required: ['city'] }),
        outputSchema: declaration.output,
        annotations: { idempotentHint: true },
        icons: [{ src: 'https://example.com/i.png' }],
        _meta: { team: 'weather' },
        execution: { taskSupport: 'optional' },
      });
      expect(Object.isFrozen(decorated.definition)).toBe(true);
      expect(decorated).toMatchObject({ taskSupport: 'optional', inputBeforeTask: true, idempotent: true });
      expect(decorated.validateOutput).toBeDefined();
    });

    it('leaves out the fields a declaration does not set', () => {
      const built = buildToolEntry({ name: 'plain', description: 'Plain' }, RUNTIME);
      expect(Object.keys(built.definition)).toEqual(['name', 'description', 'inputSchema']);
      expect(built).toMatchObject({ scopes: [], roles: [], public: false, inputBeforeTask: false, idempotent: false });
      expect(built.taskSupport).toBeUndefined();
      expect(built.validateOutput).toBeUndefined();
    });

    it('publishes a valid x-mcp-header annotation as declared', () => {
      const built = buildToolEntry(headerTool({ type: 'string', 'x-mcp-header': 'Region' }), RUNTIME);
      expect(built.definition.inputSchema).toEqual({
        type: 'object',
        properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
      });
    });

    it.each([
      ['a number property', { type: 'number', 'x-mcp-header': 'Region' }, 'not "number"'],
      ['a name that is not an HTTP token', { type: 'string', 'x-mcp-header': 'Re gion' }, 'non-empty HTTP token'],
    ])('refuses an x-mcp-header on %s with one message shape for both owners', (_label, property, problem) => {
      const decorated = configurationError(() => buildToolEntry(headerTool(property), DECORATED));
      const runtime = configurationError(() => buildToolEntry(headerTool(property), RUNTIME));
      expect(decorated.message).toContain(`@McpTool "forecast" on ${DECORATED}: invalid x-mcp-header`);
      expect(decorated.message).toContain(problem);
      expect(runtime.message).toBe(decorated.message.replace(DECORATED, RUNTIME));
    });

    it('names `namedBy` for an invalid name and the owner for the other checks', () => {
      const bad = { name: 'bad name!', description: 'd' };
      expect(configurationError(() => buildToolEntry(bad, RUNTIME, 'McpRegistry')).message).toContain(
        '@McpTool on McpRegistry has the invalid name "bad name!"',
      );
      expect(configurationError(() => buildToolEntry(bad, DECORATED)).message).toContain(`on ${DECORATED} has`);
    });

    it.each([
      ['an input schema whose root is not an object', { input: { type: 'array' } }, 'the input schema is invalid'],
      ['an output schema whose root is not an object', { output: { type: 'string' } }, 'the output schema is invalid'],
      ['a schema that does not compile', { input: { type: 'object', properties: { a: { type: 'x' } } } }, 'input'],
      ['an empty task option', { task: '' }, '@McpTool option "task" is ""'],
      ['inputBeforeTask without tasks', { inputBeforeTask: true }, 'needs task'],
      ['scopes that are not scope names', { scopes: ['a b'] }, 'scopes must be an array of scope names'],
      ['roles that are not role names', { roles: [''] }, 'roles must be an array of role names'],
      ['a public tool with scopes', { public: true, scopes: ['admin'] }, 'is public and also asks for scopes'],
    ])('refuses %s, naming the owner', (_label, fields, text) => {
      const declaration = { name: 'forecast', description: 'd', ...fields } as McpToolMetadata;
      const error = configurationError(() => buildToolEntry(declaration, DECORATED));
      expect(error.message).toContain(DECORATED);
      expect(error.message).toContain(text);
    });

    it('keeps scopes and roles once each', () => {
      const built = buildToolEntry(
        { name: 'guarded', description: 'd', scopes: ['read', 'read'], roles: ['ops', 'ops'] },
        DECORATED,
      );
      expect(built).toMatchObject({ scopes: ['read'], roles: ['ops'], public: false });
    });
  });

  describe('rateLimit', () => {
    const tool = (rateLimit: unknown): McpToolMetadata =>
      ({ name: 'forecast', description: 'Forecasts', rateLimit }) as McpToolMetadata;

    it("keeps a tool's budget, per principal unless it says per: 'mount', and publishes nothing of it", () => {
      expect(buildToolEntry(tool({ limit: 5, windowMs: 60_000 }), DECORATED).rateLimit).toEqual({
        limit: 5,
        windowMs: 60_000,
        per: 'principal',
      });
      const shared = buildToolEntry(tool({ limit: 5, windowMs: 1000, per: 'mount' }), RUNTIME);
      expect(shared.rateLimit).toEqual({ limit: 5, windowMs: 1000, per: 'mount' });
      expect(shared.definition).toEqual({
        name: 'forecast',
        description: 'Forecasts',
        inputSchema: { type: 'object', additionalProperties: false },
      });
      expect(buildToolEntry(tool(undefined), DECORATED).rateLimit).toBeUndefined();
    });

    it.each([
      [{ limit: 0, windowMs: 1000 }],
      [{ limit: 5 }],
      [{ limit: 5, windowMs: -1 }],
      [{ limit: '5', windowMs: 1000 }],
      [{ limit: 5, windowMs: 1000, per: 'session' }],
      [{ limit: 5, windowMs: 1000, burst: 2 }],
      [[5, 1000]],
      [null],
    ])('refuses %j at boot, naming the owner (decorated or runtime) and the expected shape', (value) => {
      for (const owner of [DECORATED, RUNTIME]) {
        expect(configurationError(() => buildToolEntry(tool(value), owner)).message).toBe(
          `@McpTool on ${owner}: rateLimit must be { limit: <calls, a positive integer>, windowMs: <a positive integer>, per?: 'principal' | 'mount' }, got ${JSON.stringify(value)}; e.g. rateLimit: { limit: 10, windowMs: 60_000 }.`,
        );
      }
    });
  });

  describe('prompts, resources and templates', () => {
    it('builds a prompt with its arguments, and the names its completers may use', () => {
      const { entry, argumentNames } = buildPromptEntry(
        { name: 'greet', description: 'Greets', arguments: [{ name: 'who', required: true }] },
        'Prompts#greet',
      );
      expect(entry.definition).toEqual({
        name: 'greet',
        description: 'Greets',
        arguments: [{ name: 'who', required: true }],
      });
      expect(argumentNames).toEqual(['who']);
      expect(buildPromptEntry({ name: 'plain' }, 'Prompts#plain').entry.definition).toEqual({ name: 'plain' });
    });

    it('builds a resource at an absolute URI and refuses a relative one', () => {
      const built = buildResourceEntry({ name: 'readme', uri: 'docs://readme', mimeType: 'text/plain' }, 'Docs#readme');
      expect(built).toMatchObject({ uri: 'docs://readme', owner: 'Docs#readme', mimeType: 'text/plain' });
      expect(built.definition).toEqual({ uri: 'docs://readme', name: 'readme', mimeType: 'text/plain' });
      expect(configurationError(() => buildResourceEntry({ name: 'r', uri: 'relative' }, 'Docs#r')).message).toContain(
        '@McpResource on Docs#r: the uri "relative" is not an absolute URI',
      );
    });

    it('parses a template and refuses one that does not parse', () => {
      const built = buildTemplateEntry({ name: 'page', uriTemplate: 'docs://pages/{id}' }, 'Docs#page');
      expect(built.template.variables).toEqual(['id']);
      expect(built.definition).toEqual({ uriTemplate: 'docs://pages/{id}', name: 'page' });
      const error = configurationError(() =>
        buildTemplateEntry({ name: 'bad', uriTemplate: 'docs://{open' }, 'Docs#bad'),
      );
      expect(error.message).toContain('@McpResourceTemplate on Docs#bad: the uriTemplate "docs://{open" is invalid');
    });
  });
});
