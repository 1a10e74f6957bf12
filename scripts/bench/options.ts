// Command-line options of `npm run bench` and the sizes of each measurement.
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './procs.ts';
import type { StoreKind } from './stores.ts';

export const PARTS = ['read', 'growth', 'write', 'history', 'jobs', 'webhooks', 'drain', 'keys', 'conformance', 'media', 'proxy'] as const;
export type Part = (typeof PARTS)[number];

export const PART_TITLES: Record<Part, string> = {
  read: 'Read path (with peak RSS under the read load)',
  growth: 'Growth: read p99 with 1,000 and 1,000,000 avatars',
  write: 'Write path: POST /v1/avatars',
  history: 'Write path with 1,000,000 finished jobs vs an empty store',
  jobs: 'Jobs: create to ready, jobs completed per second',
  webhooks: 'Webhooks: deliveries per second and lag',
  drain: 'Growth: draining a backlog of queued webhooks',
  keys: 'Growth: memory with 10 and 100,000 active keys',
  conformance: 'Conformance runner, core profile',
  media: "Media: making an avatar's preview and a 30-second video",
  proxy: 'Conformance proxy: RSS after 1 GB of traffic',
};

/** How big each measurement is. `quick` is a smoke run: every path runs, no figure is meant to be quoted. */
export interface Sizes {
  connections: number;
  warmupSeconds: number;
  roundSeconds: number;
  rounds: number;
  /** Avatars of the small and the large store (growth). */
  smallAvatars: number;
  largeAvatars: number;
  /** Distinct avatar IDs the growth load spreads its reads over (at most the store's size). */
  growthIds: number;
  writeConnections: number;
  /** Queued jobs the runner drains (jobs completed per second). */
  backlogJobs: number;
  /** Jobs made one at a time for the create-to-ready latency. */
  latencyJobs: number;
  /** Jobs with a webhook_url made through the API, at a steady rate, for the delivery lag. */
  webhookJobs: number;
  webhookRate: number;
  /** Queued webhook events to drain. */
  drainEvents: number;
  /** Key counts compared for memory, and requests spread over them in each case. */
  fewKeys: number;
  manyKeys: number;
  keyRequests: number;
  profileSeconds: number;
  conformanceTimeoutSeconds: number;
  /** The whole run stops here, cleaning up, whatever is left. */
  runLimitSeconds: number;
}

export const FULL: Sizes = {
  connections: 50,
  warmupSeconds: 1,
  roundSeconds: 4,
  rounds: 5,
  smallAvatars: 1_000,
  largeAvatars: 1_000_000,
  growthIds: 100_000,
  writeConnections: 50,
  backlogJobs: 5_000,
  latencyJobs: 300,
  webhookJobs: 1_500,
  webhookRate: 100,
  drainEvents: 10_000,
  fewKeys: 10,
  manyKeys: 100_000,
  keyRequests: 100_000,
  profileSeconds: 3,
  conformanceTimeoutSeconds: 600,
  runLimitSeconds: 45 * 60,
};

export const QUICK: Sizes = {
  connections: 50,
  warmupSeconds: 0.5,
  roundSeconds: 1,
  rounds: 1,
  smallAvatars: 1_000,
  largeAvatars: 20_000,
  growthIds: 5_000,
  writeConnections: 50,
  backlogJobs: 300,
  latencyJobs: 20,
  webhookJobs: 100,
  webhookRate: 100,
  drainEvents: 1_000,
  fewKeys: 10,
  manyKeys: 2_000,
  keyRequests: 4_000,
  profileSeconds: 1,
  conformanceTimeoutSeconds: 300,
  runLimitSeconds: 10 * 60,
};

export interface Options {
  quick: boolean;
  parts: Part[];
  stores: StoreKind[];
  outDir: string;
  sizes: Sizes;
  /** Whether the conformance part was asked for by name (quick runs leave it out otherwise). */
  explicitParts: boolean;
  /** A latest.json to render again instead of measuring. */
  render?: string;
}

export const USAGE = `usage: node scripts/bench/run.ts [--quick] [--only a,b] [--skip a,b] [--stores embedded,pg] [--out dir]
       node scripts/bench/run.ts --render bench/latest.json [--out dir]

  --quick     short loads and small data: a smoke run (writes to a temp folder unless --out)
  --only      parts to run: ${PARTS.join(', ')}
  --skip      parts to leave out
  --stores    stores to run the server on: embedded, pg (default both)
  --out       folder of latest.md, latest.json and read-throughput.svg (default bench/)
  --render    write the report again from a latest.json (wording, verdict, chart), measuring nothing`;

export class UsageError extends Error {
  override name = 'UsageError';
}

function list<T extends string>(raw: string | undefined, allowed: readonly T[], flag: string): T[] | undefined {
  if (raw === undefined) return undefined;
  const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const item of items) if (!(allowed as readonly string[]).includes(item)) throw new UsageError(`${flag}: unknown "${item}" (one of ${allowed.join(', ')})`);
  return items as T[];
}

export function parseOptions(argv: readonly string[]): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        quick: { type: 'boolean', default: false },
        only: { type: 'string' },
        skip: { type: 'string' },
        stores: { type: 'string' },
        out: { type: 'string' },
        render: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) throw new UsageError('');
  const quick = values.quick ?? false;
  const only = list(values.only, PARTS, '--only');
  const skip = list(values.skip, PARTS, '--skip') ?? [];
  // A quick run is a smoke test of the harness; the conformance run alone takes about a
  // minute, so it joins a quick run only when named.
  const wanted = only ?? PARTS.filter((p) => !(quick && p === 'conformance'));
  const parts = wanted.filter((p) => !skip.includes(p));
  if (parts.length === 0) throw new UsageError('nothing to run: --only and --skip leave no part');
  const stores = list(values.stores, ['embedded', 'pg'] as const, '--stores') ?? ['embedded', 'pg'];
  if (stores.length === 0) throw new UsageError('--stores needs at least one store');
  if (values.render) {
    const file = resolve(values.render);
    return { quick, parts, stores, outDir: values.out ? resolve(values.out) : dirname(file), sizes: FULL, explicitParts: false, render: file };
  }
  const outDir = values.out ? resolve(values.out) : quick ? join(tmpdir(), 'avatar-bench-quick') : join(ROOT, 'bench');
  return { quick, parts, stores, outDir, sizes: quick ? QUICK : FULL, explicitParts: only !== undefined };
}
