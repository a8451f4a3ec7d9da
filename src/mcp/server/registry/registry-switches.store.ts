import type { Redis } from 'ioredis';
import type { McpPubSub } from '../pubsub/mcp-pubsub.interface';
import { McpRedisPubSub } from '../pubsub/redis-pubsub';

/** Where the switched-off handlers of a mount are kept, so every replica, and one booting later, reads the same state. */
export interface RegistrySwitchStore {
  /** Every field now off. */
  load(): Promise<string[]>;
  /** Turns fields off. */
  add(fields: string[]): Promise<void>;
  /** Turns fields on again. */
  remove(fields: string[]): Promise<void>;
}

/** One Redis hash per mount (the bus' Redis): fields are set and deleted one by one, so two replicas never overwrite each other. */
class RedisSwitchStore implements RegistrySwitchStore {
  constructor(
    private readonly redis: Redis,
    private readonly key: string,
  ) {}

  async load(): Promise<string[]> {
    return this.redis.hkeys(this.key);
  }

  async add(fields: string[]): Promise<void> {
    if (fields.length) await this.redis.hset(this.key, Object.fromEntries(fields.map((field) => [field, '0'])));
  }

  async remove(fields: string[]): Promise<void> {
    if (fields.length) await this.redis.hdel(this.key, ...fields);
  }
}

/** Process memory: a single replica without Redis. */
class LocalSwitchStore implements RegistrySwitchStore {
  private readonly fields = new Set<string>();

  async load(): Promise<string[]> {
    return [...this.fields];
  }

  async add(fields: string[]): Promise<void> {
    for (const field of fields) this.fields.add(field);
  }

  async remove(fields: string[]): Promise<void> {
    for (const field of fields) this.fields.delete(field);
  }
}

/** The switch store of a mount: in the bus' Redis when there is one (`<prefix>:<mount>:registry:off`), else in memory. */
export function createRegistrySwitchStore(pubsub: McpPubSub, prefix: string, mount: string): RegistrySwitchStore {
  return pubsub instanceof McpRedisPubSub ? new RedisSwitchStore(pubsub.commands, `${prefix}:${mount}:registry:off`) : new LocalSwitchStore();
}
