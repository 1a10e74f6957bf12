// Prometheus metrics (GET /metrics). Each app gets its own registry so tests and
// several apps in one process never share counters.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  jobDuration: Histogram<'kind' | 'status'>;
  queueDepth: Gauge<'status'>;
  webhookDeliveries: Counter<'outcome'>;
  webhookPending: Gauge;
  webhookCircuitsOpened: Counter;
}

export function createMetrics(collect: { activeJobs?: () => Promise<{ queued: number; processing: number }>; pendingEvents?: () => Promise<number> } = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames: ['method', 'route', 'status'], registers: [registry] }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer an HTTP request',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    jobDuration: new Histogram({
      name: 'job_duration_seconds',
      help: 'Time a worker spent on a job, by kind and outcome',
      labelNames: ['kind', 'status'],
      buckets: [0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'job_queue_depth',
      help: 'Jobs queued or processing',
      labelNames: ['status'],
      registers: [registry],
      async collect() {
        if (!collect.activeJobs) return;
        const { queued, processing } = await collect.activeJobs();
        this.set({ status: 'queued' }, queued);
        this.set({ status: 'processing' }, processing);
      },
    }),
    webhookDeliveries: new Counter({ name: 'webhook_deliveries_total', help: 'Webhook delivery attempts by outcome', labelNames: ['outcome'], registers: [registry] }),
    webhookCircuitsOpened: new Counter({
      name: 'webhook_destination_circuits_opened_total',
      help: 'Times a webhook destination failed often enough in a row to get one attempt at a time',
      registers: [registry],
    }),
    webhookPending: new Gauge({
      name: 'webhook_events_pending',
      help: 'Webhook events not yet delivered nor given up',
      registers: [registry],
      async collect() {
        if (collect.pendingEvents) this.set(await collect.pendingEvents());
      },
    }),
  };
}
