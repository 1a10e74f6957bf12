// The runner against a scripted engine: retries after a crash are bounded, an engine
// that throws fails the job with its credits released, and an account's next video waits
// for the previous one's render, not for its whole job.
import { afterEach, describe, expect, it } from 'vitest';
import type { Job } from '../../src/domain/model.ts';
import type { GenerationEngine } from '../../src/domain/engine.ts';
import { promptAvatar, startTestService, type TestService } from '../support/harness.ts';

let svc: TestService | undefined;
afterEach(async () => {
  await svc?.dispose();
  svc = undefined;
});

describe('the job runner', () => {
  it('fails a job whose engine throws, releasing its credits', async () => {
    const engine: GenerationEngine = {
      async generate() {
        throw new Error('model crashed');
      },
      async artifact() {
        return null;
      },
    };
    svc = await startTestService({ engine });
    const { api_key: key } = await svc.account({ credits: 10 });

    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    const avatar = await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key);

    expect(avatar.error).toEqual({ code: 'generation_failed', message: expect.any(String) });
    expect((await svc.request('GET', '/v1/me', { key })).body.credits).toMatchObject({ used: 0, reserved: 0, available: 10 });
  });

  it('fails a job as interrupted once it used up its attempts', async () => {
    const seen: number[] = [];
    const engine: GenerationEngine = {
      async generate(job: Job) {
        seen.push(job.attempts);
        return { status: 'ready', result: {} };
      },
      async artifact() {
        return null;
      },
    };
    svc = await startTestService({ engine, env: { JOB_MAX_ATTEMPTS: '2' } });
    const { api_key: key } = await svc.account({ credits: 10 });
    await svc.runner.stop(0);
    const created = await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() });
    // Two workers that died holding it, one after the other's lease ran out: each claim counts an attempt.
    expect(await svc.store.jobs.claimJob('dead-1', 0, 1)).toMatchObject({ attempts: 1 });
    expect(await svc.store.jobs.claimJob('dead-2', 2, 3)).toMatchObject({ attempts: 2 });

    svc.runner.start();
    const avatar = await svc.waitTerminal(`/v1/avatars/${created.body.id}`, key);

    expect(seen).toEqual([]);
    expect(avatar.error).toMatchObject({ code: 'interrupted' });
    expect((await svc.request('GET', '/v1/me', { key })).body.credits.available).toBe(10);
  });

  it("takes an account's next video once the engine says the previous one's render is done, while that job goes on", async () => {
    const log: string[] = [];
    const gates = new Map<string, () => void>();
    const renderedOf = new Map<string, () => void>();
    const seen = new Map<string, () => void>();
    const seenOnce = (what: string) => new Promise<void>((resolve) => seen.set(what, resolve));
    const engine: GenerationEngine = {
      async generate(job, signal, inputs) {
        const what = job.kind === 'avatar' ? (job.input as { name: string }).name : (job.input as { script: string }).script;
        log.push(`start ${what}`);
        seen.get(what)?.();
        if (job.kind === 'avatar') return { status: 'ready', result: {} };
        renderedOf.set(what, inputs!.rendered!);
        // Held until the test lets it go, or the service stops.
        await new Promise<void>((resolve, reject) => {
          gates.set(what, resolve);
          signal.addEventListener('abort', () => reject(signal.reason as Error));
        });
        return { status: 'ready', result: {} };
      },
      async artifact() {
        return null;
      },
    };
    svc = await startTestService({ engine });
    const { api_key: key } = await svc.account({ credits: 1000 });
    const avatar = await svc.waitTerminal(`/v1/avatars/${(await svc.request('POST', '/v1/avatars', { key, json: promptAvatar() })).body.id}`, key);
    await svc.runner.stop(0);
    const first = (await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: avatar.id, script: 'first' } })).body.id;
    const secondId = (await svc.request('POST', '/v1/avatar-videos', { key, json: { avatar_id: avatar.id, script: 'second' } })).body.id;
    // Queued after the second video: once the runner starts it, it has passed the second one over.
    await svc.request('POST', '/v1/avatars', { key, json: { ...promptAvatar(), name: 'sentinel' } });

    const started = [seenOnce('first'), seenOnce('sentinel')];
    svc.runner.start();
    await Promise.all(started);
    const heldBack = [...log];
    const secondMeanwhile = (await svc.request('GET', `/v1/avatar-videos/${secondId}`, { key })).body.status;
    const second = seenOnce('second');
    log.push('rendered first');
    renderedOf.get('first')!();
    await second;
    const firstMeanwhile = (await svc.request('GET', `/v1/avatar-videos/${first}`, { key })).body.status;
    gates.get('first')!();
    gates.get('second')!();

    // A video starts after reading its avatar, so the sentinel may start before the first video.
    expect(heldBack.filter((e) => e.startsWith('start') && e !== `start ${avatar.name}`).sort()).toEqual(['start first', 'start sentinel']);
    expect(secondMeanwhile).toBe('queued');
    expect(log.slice(-2)).toEqual(['rendered first', 'start second']);
    expect(firstMeanwhile).toBe('processing');
    expect((await svc.waitTerminal(`/v1/avatar-videos/${first}`, key)).status).toBe('ready');
  });
});
