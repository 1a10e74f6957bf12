// The server's memory with few and with many active keys. Keys are
// written in bulk into a fresh store; the same number of reads is then spread
// round-robin over them, so that every key authenticates and is counted by the limiter.
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { bearer, sleep, startBenchServer, waitFor, type Context } from '../harness.ts';
import { cycle, runLoad } from '../load.ts';
import type { KeysCase, KeysSection } from '../model.ts';
import type { Proc } from '../procs.ts';
import { parseGcTrace } from '../stats.ts';
import { STORE_LABEL, type StoreKind } from '../stores.ts';

const SETTLED_MS = 1000;
const SNAPSHOT_TIMEOUT_MS = 120_000;

/**
 * The server's live JS heap after its load: a heap snapshot, asked for by signal, starts
 * with a full garbage collection, which --trace-gc reports with what it left. RSS alone
 * cannot tell data kept per key from heap V8 keeps for allocation speed.
 */
async function liveHeapMB(proc: Proc, dir: string): Promise<number | null> {
  process.kill(proc.pid, 'SIGUSR2');
  let lastSize = -1;
  await waitFor('the heap snapshot', async () => {
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
    if (!file) return undefined;
    const size = statSync(join(dir, file)).size;
    const stable = size > 0 && size === lastSize;
    lastSize = size;
    return stable ? true : undefined;
  }, SNAPSHOT_TIMEOUT_MS, 250);
  return parseGcTrace(proc.output()).liveAfterFullGcMB;
}

export async function keysPhase(ctx: Context): Promise<KeysSection> {
  const { sizes } = ctx;
  const stores: { store: StoreKind; cases: KeysCase[] }[] = [];
  for (const kind of ctx.options.stores) {
    const cases: KeysCase[] = [];
    for (const keys of [sizes.fewKeys, sizes.manyKeys]) {
      const store = await ctx.store(kind);
      try {
        const owner = await store.createOwner({ name: 'Bench keys' });
        await store.seedAvatars(owner, 1);
        const [avatarId] = await store.sampleAvatarIds(owner, 1);
        const all = [owner.apiKey, ...(await store.seedKeys(owner, keys - 1))];
        const snapshots = mkdtempSync(join(ctx.tmp, `keys-${kind}-${keys}-`));
        const proc = await startBenchServer(`server-${kind}-keys-${keys}`, store, {}, ['--trace-gc', '--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`]);
        try {
          await sleep(SETTLED_MS);
          const idle = proc.memory();
          ctx.log(`keys: ${STORE_LABEL[kind]}: ${keys.toLocaleString('en-US')} keys, ${sizes.keyRequests.toLocaleString('en-US')} reads spread over them`);
          const next = cycle(all);
          const load = await runLoad({
            url: proc.url,
            path: `/v1/avatars/${avatarId}`,
            connections: sizes.connections,
            amount: sizes.keyRequests,
            maxSeconds: 300,
            expectedStatus: 200,
            setup: (req) => ({ ...req, headers: { ...req.headers, ...bearer(next()) } }),
          });
          const after = proc.memory();
          const liveHeap = await liveHeapMB(proc, snapshots);
          cases.push({
            keys,
            requests: load.responses,
            rps: load.rps,
            unexpected: load.responses - load.ok + load.errors,
            rssIdleBytes: idle?.rssBytes ?? Number.NaN,
            rssAfterBytes: after?.rssBytes ?? Number.NaN,
            hwmBytes: after?.hwmBytes ?? Number.NaN,
            liveHeapMB: liveHeap,
          });
        } finally {
          await proc.stop();
        }
      } finally {
        await ctx.drop(store);
      }
    }
    stores.push({ store: kind, cases });
  }
  return { connections: sizes.connections, stores };
}
