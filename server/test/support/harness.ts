// Starts a real service (embedded store in a temp folder, port 0) and talks to it over
// HTTP like any client. Every response is checked against the contract on the way.
import { pino } from 'pino';
import { expect } from 'vitest';
import { loadConfig, type Config } from '../../src/config.ts';
import { createAccount, createWorkspace, type CreatedAccount, type CreatedWorkspace } from '../../src/domain/accounts.ts';
import type { Clock } from '../../src/domain/clock.ts';
import type { KeyMode, RatePlan } from '../../src/domain/model.ts';
import type { GenerationEngine } from '../../src/domain/engine.ts';
import { startService, type Service } from '../../src/runtime.ts';
import type { Resolver } from '../../src/workers/deliver.ts';
import { contractViolations } from './contractViolations.ts';
import { createTestStoreEnv, type TestStoreEnv } from './stores.ts';

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface TestService extends Service {
  /** The store this service runs on; pass it to another startTestService to restart on the same data. */
  storeEnv: TestStoreEnv;
  config: Config;
  account(options?: { credits?: number; mode?: KeyMode; plan?: RatePlan; name?: string }): Promise<CreatedAccount>;
  /** A workspace of the owner account `ownerId`, with one key. */
  workspace(ownerId: string, options?: { credits?: number; mode?: KeyMode; plan?: RatePlan; name?: string }): Promise<CreatedWorkspace>;
  request<T = any>(method: string, path: string, options?: { key?: string; json?: unknown; body?: string | Buffer; headers?: Record<string, string> }): Promise<Reply<T>>;
  /** Jobs queued or processing in all; workers move jobs between the two, the total is what a refused request must not grow. */
  activeJobs(): Promise<number>;
  /** Polls until the record is terminal (test-side helper, real time). */
  waitTerminal(path: string, key: string, timeoutMs?: number): Promise<any>;
  dispose(): Promise<void>;
}

export async function startTestService(
  options: { env?: Record<string, string>; clock?: Clock; engine?: GenerationEngine; storeEnv?: TestStoreEnv; resolve?: Resolver; random?: () => number } = {},
): Promise<TestService> {
  const storeEnv = options.storeEnv ?? (await createTestStoreEnv());
  const config = loadConfig({ PORT: '0', ...storeEnv.env, LOG_LEVEL: 'silent', ENGINE_AVATAR_MS: '0', ENGINE_VIDEO_MS: '0', JOB_POLL_MS: '20', SHUTDOWN_GRACE_MS: '200', ...options.env });
  const service = await startService(config, { clock: options.clock, engine: options.engine, resolve: options.resolve, random: options.random, log: pino({ level: 'silent' }) });
  const base = service.url;
  const { store, domain } = service;

  const request: TestService['request'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.Authorization = `Bearer ${o.key}`;
    let body: string | Buffer | undefined = o.body;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers['Content-Type'] ??= 'application/json';
    }
    const res = await fetch(base + path, { method, headers, body });
    const text = await res.text();
    const type = res.headers.get('content-type') ?? '';
    const parsed = type.includes('json') && text ? JSON.parse(text) : text;
    expect(res.headers.get('x-request-id'), `X-Request-Id on ${method} ${path}`).toBeTruthy();
    expect(contractViolations({ method, path, status: res.status, headers: res.headers, text, body: parsed })).toEqual([]);
    return { status: res.status, headers: res.headers, body: parsed };
  };

  return {
    ...service,
    storeEnv,
    config,
    request,
    account: (a = {}) => createAccount(store, domain.clock, { name: a.name, monthlyCredits: a.credits, mode: a.mode, plan: a.plan }),
    workspace: (ownerId, a = {}) => createWorkspace(store, domain.clock, ownerId, { name: a.name, monthlyCredits: a.credits, mode: a.mode, plan: a.plan }),
    async activeJobs() {
      const { queued, processing } = await store.jobs.countActiveJobs();
      return queued + processing;
    },
    // A video's job renders its file before it is ready: seconds on a loaded machine.
    // Polls back off from 20 ms to 250 ms, so a slow job spends some 100 reads in its 20 s
    // (not one every 20 ms): the read limit is 120 a minute, and under a service clock that
    // stands still a spent window never reopens. A refusal says so at once.
    async waitTerminal(path, key, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (let pause = 20; ; pause = Math.min(250, pause * 1.5)) {
        const r = await request('GET', path, { key });
        if (r.body.status === 'ready' || r.body.status === 'failed') return r.body;
        if (r.status === 429) throw new Error(`${path}: the read limit refused the wait's poll (429) before the job ended`);
        if (Date.now() > deadline) throw new Error(`${path} still ${r.body.status} after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    },
    async dispose() {
      await service.stop();
      if (!options.storeEnv) await storeEnv.drop();
    },
  };
}

export const promptAvatar = (extra: Record<string, unknown> = {}) => ({ type: 'prompt', name: 'Maya', prompt: 'A smiling woman in a bright kitchen', ...extra });

/** A plan that keeps the limiter out of the way of tests about something else. */
export const GENEROUS_PLAN: RatePlan = { read: { minute: 100_000, day: 1_000_000 }, generation: { minute: 10_000, day: 100_000 } };
