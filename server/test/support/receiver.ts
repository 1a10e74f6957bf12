// A real HTTP receiver for webhook tests: records every delivery with its raw body and
// answers what the test scripts (a status, a hang, a redirect).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  at: number;
  path: string;
  headers: IncomingMessage['headers'];
  rawBody: string;
  body: any;
}

/**
 * A delivered body with its file links' query (`expires` and `signature`) left out: each
 * attempt, and each read of the delivery log, signs the links afresh (ND-FILE-LINKS), while
 * every other byte is the event as stored.
 */
export const withoutLinkQueries = (raw: string): string => raw.replace(/\?expires=\d+&signature=[\w-]+/gu, '');

/** What to answer; `after` holds the answer until it settles (a delivery kept in flight while the test acts). */
export type Answer = { status: number; headers?: Record<string, string>; body?: string | Buffer; after?: Promise<unknown> } | 'hang';

export interface TestReceiver {
  url: string;
  deliveries: Delivery[];
  /** How to answer the n-th delivery (0-based) to a path; defaults to 200. */
  script: (path: string, n: number) => Answer;
  waitFor(count: number, timeoutMs?: number): Promise<Delivery[]>;
  /** Ends every hanging answer's connection, so the attempts held by it fail now. */
  dropHanging(): void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<TestReceiver> {
  const deliveries: Delivery[] = [];
  const counts = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  const receiver: TestReceiver = {
    url: '',
    deliveries,
    script: () => ({ status: 200 }),
    // The limit only ends a failing wait: a loaded machine can take seconds to deliver
    // (a scaled run saw more than 5 s), and a passing test waits for the delivery alone.
    async waitFor(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (deliveries.length < count) {
        if (Date.now() > deadline) throw new Error(`only ${deliveries.length} of ${count} deliveries after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return deliveries;
    },
    dropHanging() {
      for (const res of hanging) res.destroy();
      hanging.clear();
    },
    async close() {
      receiver.dropHanging();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      const n = counts.get(path) ?? 0;
      counts.set(path, n + 1);
      deliveries.push({ at: Date.now(), path, headers: req.headers, rawBody, body: rawBody ? JSON.parse(rawBody) : null });
      const answer = receiver.script(path, n);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const send = () => {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body ?? 'ok');
      };
      if (answer.after) void answer.after.then(send, send);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
