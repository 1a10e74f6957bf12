// A TCP proxy the test can cut and restore, to take PostgreSQL or Redis away from a
// running server without touching the real services; with several targets, a
// round-robin load balancer in front of API processes.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Where new connections go from now on, in turn (a balancer started before its backends). */
  retarget(...targets: { host: string; port: number }[]): void;
  /** Drops every connection and stops listening: the target looks down. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Forwards each connection to the next target in turn: one target is a plain proxy, several a round-robin load balancer. */
export async function startTcpProxy(targetHost: string, targetPort: number, ...more: { host: string; port: number }[]): Promise<TcpProxy> {
  let targets = [{ host: targetHost, port: targetPort }, ...more];
  let next = 0;
  const sockets = new Set<Socket>();
  let server: Server;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const target = targets[next++ % targets.length]!;
        const upstream = connect(target.port, target.host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  await listen();
  return {
    get port() {
      return port;
    },
    retarget(...next) {
      targets = next;
    },
    cut: stop,
    restore: listen,
    close: stop,
  };
}
