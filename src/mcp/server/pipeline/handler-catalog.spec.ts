import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { HandlerCatalog, type CatalogEntry } from './handler-catalog';

type Entry = CatalogEntry & { name: string };

const entry = (name: string, owner: string): Entry => ({ name, owner, definition: Object.freeze({ name }) });

/** The keyed store behind the tools, prompts, resources and resource templates of a mount. */
describe('HandlerCatalog', () => {
  let changes: number;
  let catalog: HandlerCatalog<Entry>;

  beforeEach(() => {
    changes = 0;
    catalog = new HandlerCatalog<Entry>(
      (e) => e.name,
      (key, first, second) => `duplicate ${key}: ${first} / ${second}`,
      () => changes++,
    );
  });

  it('serves entries under their key, in registration order, and reports each change', () => {
    catalog.add(entry('b', 'B#b'));
    catalog.add(entry('a', 'A#a'));
    expect([...catalog.values()].map((e) => e.name)).toEqual(['b', 'a']);
    expect(catalog.get('a')?.owner).toBe('A#a');
    expect(catalog.get('c')).toBeUndefined();
    expect(catalog.size).toBe(2);
    expect(changes).toBe(2);
  });

  it('refuses a second entry under a key with the message naming both owners, and keeps the first', () => {
    catalog.add(entry('a', 'First#a'));
    expect(() => catalog.add(entry('a', 'Second#a'))).toThrow(
      new McpConfigurationError('duplicate a: First#a / Second#a'),
    );
    expect(catalog.get('a')?.owner).toBe('First#a');
    expect(catalog.size).toBe(1);
    expect(changes).toBe(1);
  });

  it('removes an entry and returns it; removing an unknown key changes nothing', () => {
    const added = entry('a', 'A#a');
    catalog.add(added);
    expect(catalog.remove('a')).toBe(added);
    expect(catalog.remove('a')).toBeUndefined();
    expect(catalog.size).toBe(0);
    expect(changes).toBe(2);
    catalog.add(entry('a', 'Again#a'));
    expect(catalog.get('a')?.owner).toBe('Again#a');
  });

  it('works without a change callback', () => {
    const quiet = new HandlerCatalog<Entry>(
      (e) => e.name,
      () => 'dup',
    );
    quiet.add(entry('a', 'A#a'));
    expect(quiet.remove('a')?.name).toBe('a');
  });
});
