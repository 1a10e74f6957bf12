// Which connection a failed request went out on, as undici (the fetch of Node) reports it
// on its diagnostics channels: fetch itself says only that it failed. A client keeps
// connections open between requests, and a server may close one that looks idle to it
// at the moment a request is written on it (a race every keep-alive client has, RFC 9112
// section 9.6), which the request then sees as a reset with no answer. Well-kept clients
// send such a request once more on a new connection when it is safe to (Go's net/http
// Transport: a reused connection, nothing of the answer read, and a request that is
// idempotent); this module tells http.ts the first two. A leaf: it imports nothing of
// the runner.
import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

interface Sent {
  /** How many requests this connection had carried before this one. */
  before: number;
  socket: Socket;
  /** Bytes the connection had read when the request was written: more later means an answer began. */
  bytesRead: number;
}

export interface FailedConnection {
  /** The connection had carried a request before this one. */
  reused: boolean;
  /** Some byte arrived on it after the request was written: an answer may have begun. */
  answerBegun: boolean;
}

const carried = new WeakMap<Socket, number>();
const sent = new WeakMap<object, Sent>();
const failures = new WeakMap<object, FailedConnection>();

let subscribed = false;

/** Starts listening to undici's channels; fetches made before are not known. */
export function watchConnections(): void {
  if (subscribed) return;
  subscribed = true;
  subscribe('undici:client:sendHeaders', (message) => {
    const { request, socket } = message as { request: object; socket: Socket };
    const before = carried.get(socket) ?? 0;
    carried.set(socket, before + 1);
    sent.set(request, { before, socket, bytesRead: socket.bytesRead });
  });
  subscribe('undici:request:error', (message) => {
    const { request, error } = message as { request: object; error: unknown };
    const on = sent.get(request);
    // Only what it is known for: an error object of its own, on a request that was written.
    if (on && typeof error === 'object' && error !== null) failures.set(error, { reused: on.before > 0, answerBegun: on.socket.bytesRead > on.bytesRead });
  });
}

/** What is known of the connection a fetch failed on, from the error's cause; undefined when nothing is. */
export function failedConnection(error: unknown): FailedConnection | undefined {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return typeof cause === 'object' && cause !== null ? failures.get(cause) : undefined;
}
