// A finished record never changes (ST-TERMINAL), so a server keeps its answer once made
// (domain/finishedRecords.ts): reading it again costs no store read. A record still under
// way is read from the store every time, and a kept answer is still only its owner's.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EngineOutcome, GenerationEngine } from '../../src/domain/engine.ts';
import { fakeClock } from '../support/clock.ts';
import { GENEROUS_PLAN, promptAvatar, startTestService, type TestService } from '../support/harness.ts';

/** An engine that holds every job until the test lets them all go. */
function heldEngine() {
  const READY: EngineOutcome = { status: 'ready', result: {} };
  const waiting: ((outcome: EngineOutcome) => void)[] = [];
  let released = false;
  const engine: GenerationEngine = {
    generate: () => (released ? Promise.resolve(READY) : new Promise((resolve) => waiting.push(resolve))),
    artifact: async () => ({ contentType: 'image/png', body: new Uint8Array() }),
  };
  const release = () => {
    released = true;
    for (const finish of waiting.splice(0)) finish(READY);
  };
  return { engine, release };
}

let svc: TestService;
let held: ReturnType<typeof heldEngine>;
let key: string;

beforeAll(async () => {
  held = heldEngine();
  // A clock that stands still: each read signs the record's file links for the lifetime
  // from its own second, so reads a second apart differ in their links' expiry alone.
  svc = await startTestService({ engine: held.engine, clock: fakeClock(Date.UTC(2026, 10, 2, 9, 0, 0)) });
  key = (await svc.account({ plan: GENEROUS_PLAN, credits: 100_000 })).api_key;
});
afterAll(async () => {
  held?.release();
  await svc?.dispose();
});

describe('a record read again', () => {
  it('comes from the store each time while under way, and from the server once finished', async () => {
    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    const path = `/v1/avatars/${created.body.id}`;
    const reads = vi.spyOn(svc.store.jobs, 'getJob');

    const underWay = [await svc.request('GET', path, { key }), await svc.request('GET', path, { key })];
    const readsUnderWay = reads.mock.calls.length;
    held.release();
    const ready = await svc.waitTerminal(path, key);
    const readsToReady = reads.mock.calls.length;
    const again = [await svc.request('GET', path, { key }), await svc.request('GET', path, { key }), await svc.request('GET', path, { key })];
    const readsAfter = reads.mock.calls.length;
    reads.mockRestore();

    expect(underWay.map((r) => r.body.status)).not.toContain('ready');
    expect(readsUnderWay).toBe(2);
    expect(ready.status).toBe('ready');
    expect(readsAfter).toBe(readsToReady);
    expect(again.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(again.map((r) => r.body)).toEqual([ready, ready, ready]);
    expect(again[0]!.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it("is still another account's business once kept: 404, as for an unknown ID", async () => {
    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key); // kept by now
    const other = (await svc.account({ plan: GENEROUS_PLAN })).api_key;

    const theirs = await svc.request('GET', `/v1/avatars/${created.body.id}`, { key: other });
    const asVideo = await svc.request('GET', `/v1/avatar-videos/${created.body.id}`, { key });

    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe('not_found');
    expect(theirs.body.detail).not.toContain('Maya');
    expect(asVideo.status).toBe(404);
  });
});

describe('with READ_CACHE_MB=0', () => {
  it('reads a finished record from the store every time', async () => {
    const plain = await startTestService({ env: { READ_CACHE_MB: '0' } });
    try {
      const own = (await plain.account({ plan: GENEROUS_PLAN, credits: 1000 })).api_key;
      const created = await plain.request('POST', '/v1/avatars', { key: own, json: promptAvatar() });
      const path = `/v1/avatars/${created.body.id}`;
      await plain.waitTerminal(path, own);
      const reads = vi.spyOn(plain.store.jobs, 'getJob');

      for (let i = 0; i < 3; i++) expect((await plain.request('GET', path, { key: own })).body.status).toBe('ready');
      const count = reads.mock.calls.length;
      reads.mockRestore();

      expect(count).toBe(3);
    } finally {
      await plain.dispose();
    }
  });
});
