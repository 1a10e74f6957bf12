// The webhook receiver of the benchmark, run in a worker thread so that its receipt
// times are not delayed by the load generator on the main thread. It answers 200 at
// once and posts one small message per delivery: when it arrived and what it carried.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

export interface ReceivedDelivery {
  /** Epoch ms with sub-ms precision, taken when the whole body was read. */
  receivedAt: number;
  eventId: string;
  /** The resource the event is about (data.object.id). */
  resourceId: string;
  /** The event's created_at: when the job reached its terminal state. */
  terminalAt: number;
  /** The resource's created_at: when the job was accepted. */
  acceptedAt: number;
}

export type ReceiverMessage = { type: 'listening'; ports: number[] } | { type: 'delivery'; delivery: ReceivedDelivery };

const port = parentPort!;
function answer(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const receivedAt = performance.timeOrigin + performance.now();
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('ok');
    try {
      const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; created_at: string; data: { object: { id: string; created_at: string } } };
      const delivery: ReceivedDelivery = {
        receivedAt,
        eventId: String(req.headers['x-service-event-id'] ?? envelope.id),
        resourceId: envelope.data.object.id,
        terminalAt: Date.parse(envelope.created_at),
        acceptedAt: Date.parse(envelope.data.object.created_at),
      };
      port.postMessage({ type: 'delivery', delivery } satisfies ReceiverMessage);
    } catch {
      // Not an event of ours: answered, not recorded.
    }
  });
}

// One port per destination the benchmark delivers to: the service shares its attempts
// fairly between destinations (host and port), so each port is a receiver of its own.
const destinations = Number((workerData as { destinations?: number } | null)?.destinations ?? 1);
const ports: number[] = [];
for (let i = 0; i < destinations; i++) {
  const listener = createServer(answer);
  listener.keepAliveTimeout = 5000;
  listener.listen(0, '127.0.0.1', () => {
    ports.push((listener.address() as AddressInfo).port);
    if (ports.length === destinations) port.postMessage({ type: 'listening', ports } satisfies ReceiverMessage);
  });
}
