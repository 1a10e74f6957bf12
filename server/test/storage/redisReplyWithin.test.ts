// The bound on a Redis reply: a silent Redis fails the request after the timeout, and a
// reply that arrived while the event loop was held up past it is still taken.
import { createServer, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisTimeoutError, replyWithin } from '../../src/storage/postgres-redis/redis/replyWithin.ts';

/** Holds the event loop for `ms`, as a long collection or a busy machine does. */
function holdUp(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

let close: (() => void) | undefined;
afterEach(() => close?.());

/** A connected pair of sockets on 127.0.0.1: what the service holds and what Redis holds. */
async function socketPair(): Promise<{ client: Socket; server: Socket }> {
  const listener = createServer();
  const accepted = new Promise<Socket>((resolve) => listener.once('connection', resolve));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const client = connect((listener.address() as { port: number }).port, '127.0.0.1');
  const server = await accepted;
  close = () => {
    client.destroy();
    server.destroy();
    listener.close();
  };
  return { client, server };
}

describe('a Redis reply', () => {
  it('that comes in time is what the call answers', async () => {
    const { client, server } = await socketPair();
    const reply = new Promise<string>((resolve) => client.once('data', (data) => resolve(String(data))));

    const answer = replyWithin(reply, 1000);
    server.write('PONG');

    await expect(answer).resolves.toBe('PONG');
  });

  it('that never comes fails the call once the timeout has passed', async () => {
    const never = new Promise<string>(() => undefined);
    const started = performance.now();

    const error = await replyWithin(never, 30).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(RedisTimeoutError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
  });

  it('that arrived while the event loop was held up past the timeout is taken, not timed out', async () => {
    const { client, server } = await socketPair();
    const reply = new Promise<string>((resolve) => client.once('data', (data) => resolve(String(data))));

    // From a check-phase callback: the next turn of the loop runs the due timer before it
    // reads the socket, which is the order that failed such replies.
    const answer = await new Promise<{ pending: Promise<string> }>((resolve) =>
      setImmediate(() => {
        const pending = replyWithin(reply, 20);
        server.write('PONG');
        holdUp(120);
        resolve({ pending });
      }),
    );

    await expect(answer.pending).resolves.toBe('PONG');
  });

  it('that fails fails the call with its own error', async () => {
    const refused = Promise.reject(new Error('Connection is closed.'));

    await expect(replyWithin(refused, 1000)).rejects.toThrow('Connection is closed.');
  });
});
