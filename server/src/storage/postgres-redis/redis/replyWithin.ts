// How long the service waits for Redis before it answers 503: a Redis that is connected but
// does not answer must not hold requests. ioredis's own command timeout is a plain timer,
// and Node runs due timers before it reads its sockets: after the event loop was held up
// for longer than the timeout (a long collection, a busy machine), the timer fired first
// and failed a command whose reply was already waiting, unread. Under load that answered
// 503 to requests Redis had served.

/** The longest a Redis reply is waited for. */
export const REDIS_REPLY_TIMEOUT_MS = 1000;

export class RedisTimeoutError extends Error {
  override name = 'RedisTimeoutError';
}

/**
 * `reply`, or a RedisTimeoutError once `ms` have passed without it. When the timer fires,
 * the verdict waits for the sockets to be read (setImmediate runs after this turn's I/O),
 * so a reply that arrived while the event loop was held up is taken, not timed out.
 */
export function replyWithin<T>(reply: Promise<T>, ms: number = REDIS_REPLY_TIMEOUT_MS): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new RedisTimeoutError(`no reply from Redis within ${ms} ms`));
      });
    }, ms);
    reply.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error as Error);
      },
    );
  });
}
