import { InFlightSet } from './in-flight-set';

interface Item {
  name: string;
}

const item = (name: string): Item => ({ name });
const names = (set: InFlightSet<Item>) =>
  set
    .values()
    .map((member) => member.name)
    .sort();

describe('InFlightSet', () => {
  it('adds each member once, and says which objects are members', () => {
    const set = new InFlightSet<Item>();
    const a = item('a');
    const b = item('b');
    expect(set.add(a).add(b).add(a)).toBe(set);
    expect(set.size).toBe(2);
    expect(set.has(a)).toBe(true);
    expect(set.has(item('a'))).toBe(false);
    expect(names(set)).toEqual(['a', 'b']);
  });

  it('deletes a member from anywhere, keeps the others findable, and refuses what is not a member', () => {
    const set = new InFlightSet<Item>();
    const members = ['a', 'b', 'c', 'd', 'e'].map(item);
    for (const member of members) set.add(member);

    expect(set.delete(members[1])).toBe(true);
    expect(set.delete(members[1])).toBe(false);
    expect(set.delete(item('z'))).toBe(false);
    expect(set.delete(members[0])).toBe(true);
    expect(set.delete(members[4])).toBe(true);

    expect(set.size).toBe(2);
    expect(names(set)).toEqual(['c', 'd']);
    for (const member of [members[2], members[3]]) expect(set.has(member)).toBe(true);
    for (const member of [members[0], members[1], members[4]]) expect(set.has(member)).toBe(false);
    // A member deleted and added again is a member again.
    set.add(members[1]);
    expect(names(set)).toEqual(['b', 'c', 'd']);
  });

  it('refuses a member of another set, until that set let it go', () => {
    const first = new InFlightSet<Item>();
    const second = new InFlightSet<Item>();
    const shared = item('shared');
    first.add(item('x')).add(shared);

    expect(() => second.add(shared)).toThrow('already belongs to another InFlightSet');
    expect(second.has(shared)).toBe(false);
    expect(second.delete(shared)).toBe(false);
    expect(first.has(shared)).toBe(true);

    expect(first.delete(shared)).toBe(true);
    second.add(shared).add(item('y'));
    expect(names(first)).toEqual(['x']);
    expect(names(second)).toEqual(['shared', 'y']);
  });

  it('iterates over the members as they were, while members leave and join', () => {
    const set = new InFlightSet<Item>();
    const members = ['a', 'b', 'c'].map(item);
    for (const member of members) set.add(member);

    const seen: string[] = [];
    for (const member of set) {
      seen.push(member.name);
      set.delete(member);
      set.add(item(`${member.name}2`));
    }
    expect(seen.sort()).toEqual(['a', 'b', 'c']);
    expect(names(set)).toEqual(['a2', 'b2', 'c2']);
  });

  it('matches a Set of the same members through a long run of random joins and leaves', () => {
    const set = new InFlightSet<Item>();
    const reference = new Set<Item>();
    const pool = Array.from({ length: 40 }, (_, i) => item(`m${i}`));
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let step = 0; step < 5000; step++) {
      const member = pool[next() % pool.length];
      if (next() % 2) {
        set.add(member);
        reference.add(member);
      } else {
        expect(set.delete(member)).toBe(reference.delete(member));
      }
      expect(set.size).toBe(reference.size);
    }
    expect(names(set)).toEqual([...reference].map((member) => member.name).sort());
  });
});
