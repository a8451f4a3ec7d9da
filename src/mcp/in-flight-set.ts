/** The set a member belongs to, if any. */
const OWNER = Symbol('durable-mcp in-flight set');
/** The member's index in its set's array. */
const SLOT = Symbol('durable-mcp in-flight slot');

type Member = { [OWNER]?: InFlightSet<object>; [SLOT]?: number };

/**
 * A set of objects that join and leave all the time (the requests in flight, their responses,
 * the batches being written), kept in a plain array instead of a `Set` or a `Map`.
 *
 * V8's `Map` and `Set` rebuild their hash table every few hundred additions when entries keep
 * coming and going, and the table they leave behind keeps a link to its successor and its own
 * entries. Once one of those tables has been moved to the old generation (any major collection
 * under load does that), it keeps the next table and the requests it held alive through every
 * young collection until the next major one; those are promoted in turn and keep their own
 * successors alive. Measured on the server under load: a young collection that kept about 0.2 MB
 * went on keeping and promoting about 2 MB each time, and took several times as long, from the
 * first major collection on. An array does not link its old backing stores, and a member leaves
 * it with nothing kept.
 *
 * Adding, finding and deleting are O(1): each member carries its set and its index (two symbol
 * properties), and the last member moves into a deleted member's place, so the order is not the
 * order of addition. So an object belongs to one `InFlightSet` at a time (adding it to a second
 * one throws), and must be extensible (not frozen or sealed). Iterating walks a copy, so members
 * may leave (or join) meanwhile.
 */
export class InFlightSet<T extends object> implements Iterable<T> {
  private readonly members: T[] = [];

  /** How many members the set holds. */
  get size(): number {
    return this.members.length;
  }

  /** Adds `member` (once: adding a member again changes nothing); throws when it belongs to another set. */
  add(member: T): this {
    const slotted = member as Member;
    if (slotted[OWNER] === this) return this;
    if (slotted[OWNER] !== undefined) throw new Error('The object already belongs to another InFlightSet');
    slotted[OWNER] = this;
    slotted[SLOT] = this.members.length;
    this.members.push(member);
    return this;
  }

  /** True when `member` belongs to the set. */
  has(member: T): boolean {
    return (member as Member)[OWNER] === this;
  }

  /** Removes `member`; false when it did not belong to the set. */
  delete(member: T): boolean {
    const slotted = member as Member;
    if (slotted[OWNER] !== this) return false;
    const index = slotted[SLOT] as number;
    const last = this.members.pop() as T;
    if (last !== member) {
      this.members[index] = last;
      (last as Member)[SLOT] = index;
    }
    slotted[OWNER] = undefined;
    return true;
  }

  /** The members now, in no particular order (a copy). */
  values(): T[] {
    return this.members.slice();
  }

  /** Walks a copy of the members: members may join or leave meanwhile. */
  [Symbol.iterator](): Iterator<T> {
    return this.values()[Symbol.iterator]();
  }
}
