/**
 * @module
 * A Redis idempotency store for receivers running on several processes or machines. Works with
 * `ioredis` and with node-redis (`redis`) clients; the client is yours, connected and closed by you.
 *
 * Claim is `SET key p:<token> NX PX <in-flight ttl>` (design D11); complete and release are
 * small Lua scripts so each checks the token and writes in one atomic step.
 */
import type { ClaimResult, IdempotencyStore } from './store.js';

/** The part of an ioredis client this store uses. */
interface IoRedisLike {
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
}
/** The part of a node-redis client this store uses. */
interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
}

export type RedisClientLike = IoRedisLike | NodeRedisLike;

export interface RedisStoreOptions {
  /** Prepended to every key. Default `linkhooks:idempotency:`. */
  prefix?: string;
}

// Complete only if the claim is still ours or has lapsed: a run that lost its claim must not
// overwrite a newer run's in-flight marker.
const COMPLETE = `local v = redis.call('GET', KEYS[1])
if v == false or v == 'p:' .. ARGV[1] then
  redis.call('SET', KEYS[1], 'd:' .. ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

const RELEASE = `if redis.call('GET', KEYS[1]) == 'p:' .. ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

function commander(client: RedisClientLike): (args: string[]) => Promise<unknown> {
  // ioredis first: it also has a sendCommand, but one that takes a Command object.
  if (typeof (client as IoRedisLike).call === 'function') {
    return ([command, ...rest]) => (client as IoRedisLike).call(command!, ...rest);
  }
  if (typeof (client as NodeRedisLike).sendCommand === 'function') {
    return (args) => (client as NodeRedisLike).sendCommand(args);
  }
  throw new TypeError('createRedisStore: pass an ioredis or node-redis client');
}

/**
 * An idempotency store on Redis, shared by every process that uses the same server and prefix.
 *
 * @example
 * import Redis from 'ioredis';
 * import { createRedisStore } from '@linkhooks/receiver/redis';
 * const store = createRedisStore(new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 }));
 */
export function createRedisStore(client: RedisClientLike, options: RedisStoreOptions = {}): IdempotencyStore {
  const send = commander(client);
  const prefix = options.prefix ?? 'linkhooks:idempotency:';
  const ms = (n: number) => String(Math.max(1, Math.ceil(n)));

  return {
    async claim(key, token, ttlMs): Promise<ClaimResult> {
      const k = prefix + key;
      const set = await send(['SET', k, `p:${token}`, 'NX', 'PX', ms(ttlMs)]);
      if (set === 'OK') return 'claimed';
      const current = await send(['GET', k]);
      return typeof current === 'string' && current.startsWith('d:') ? 'completed' : 'in_flight';
    },
    async complete(key, token, ttlMs) {
      await send(['EVAL', COMPLETE, '1', prefix + key, token, ms(ttlMs)]);
    },
    async release(key, token) {
      await send(['EVAL', RELEASE, '1', prefix + key, token]);
    },
  };
}

export type { ClaimResult, IdempotencyStore } from './store.js';
