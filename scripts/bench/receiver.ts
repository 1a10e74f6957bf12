// The main-thread side of the webhook receiver (receiver-worker.ts): starts the worker,
// keeps the deliveries it reports, and waits for them with a deadline.
import { Worker } from 'node:worker_threads';
import type { ReceivedDelivery, ReceiverMessage } from './receiver-worker.ts';

export type { ReceivedDelivery };

export interface BenchReceiver {
  /** The first destination's URL. */
  url: string;
  /** One URL per destination (a port each), the first being `url`. */
  urls: string[];
  deliveries: ReceivedDelivery[];
  /** Distinct event IDs received since the last reset. */
  distinct(): number;
  /** Resolves with the delivery about `resourceId`, or rejects after `timeoutMs`. */
  waitForResource(resourceId: string, timeoutMs: number): Promise<ReceivedDelivery>;
  /** Resolves once `count` distinct events arrived, or rejects after `timeoutMs`. */
  waitForCount(count: number, timeoutMs: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

export async function startReceiver(destinations = 1): Promise<BenchReceiver> {
  const worker = new Worker(new URL('./receiver-worker.ts', import.meta.url), { workerData: { destinations } });
  const deliveries: ReceivedDelivery[] = [];
  const seen = new Set<string>();
  const waiting = new Map<string, (d: ReceivedDelivery) => void>();
  let onAny: (() => void) | undefined;

  const ports = await new Promise<number[]>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: ReceiverMessage) => {
      if (message.type === 'listening') {
        resolve(message.ports);
        return;
      }
      const d = message.delivery;
      deliveries.push(d);
      seen.add(d.eventId);
      waiting.get(d.resourceId)?.(d);
      waiting.delete(d.resourceId);
      onAny?.();
    });
  });

  return {
    url: `http://127.0.0.1:${ports[0]}/hooks`,
    urls: ports.map((port) => `http://127.0.0.1:${port}/hooks`),
    deliveries,
    distinct: () => seen.size,
    waitForResource(resourceId, timeoutMs) {
      const already = deliveries.find((d) => d.resourceId === resourceId);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(resourceId);
          reject(new Error(`no webhook for ${resourceId} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.set(resourceId, (d) => {
          clearTimeout(timer);
          resolve(d);
        });
      });
    },
    waitForCount(count, timeoutMs) {
      if (seen.size >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          onAny = undefined;
          reject(new Error(`only ${seen.size} of ${count} webhooks within ${timeoutMs} ms`));
        }, timeoutMs);
        onAny = () => {
          if (seen.size < count) return;
          clearTimeout(timer);
          onAny = undefined;
          resolve();
        };
      });
    },
    reset() {
      deliveries.length = 0;
      seen.clear();
      waiting.clear();
      onAny = undefined;
    },
    async close() {
      await worker.terminate();
    },
  };
}
