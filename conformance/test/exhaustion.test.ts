// Observing a key while it is over its limit, whatever way its window counts: an
// observation the window reopened during is made again in a fresh window, a costly one
// waits for a refusal that lasts, and a run that cannot conclude says why.
import { describe, expect, it } from 'vitest';
import type { CheckContext } from '../src/context.ts';
import type { Exchange, SendRequest } from '../src/http.ts';
import { REFUSAL_TRIES, refusedBelowOwnLimit, surelyRefusedUntil, whileRefused } from '../src/observe/exhaustion.ts';
import { resolveOptions } from '../src/options.ts';

/** One answer of the scripted service: its status and its Retry-After. */
type Scripted = { status: number; retryAfter?: number };

/**
 * A check context over a scripted service: `answer` decides each request from what was
 * sent before it. Time is the fake clock's: each request takes 5 ms, a sleep moves it on.
 */
function scriptedContext(answer: (request: SendRequest, sent: readonly Exchange[]) => Scripted, clockMoves = false) {
  let now = 1_000_000;
  const sent: Exchange[] = [];
  const notes: string[] = [];
  const slept: number[] = [];
  const advanced: number[] = [];
  const options = resolveOptions({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', secondKey: 'k2', expectedLimits: { generation: [3] }, windowSeconds: [60] });
  const ctx = {
    checkId: 'test',
    contract: true,
    options,
    hasKey: (key: string) => key === 'main' || key === 'second',
    http: {
      log: sent,
      pacer: { gate: () => ({ limit: 3 }) },
      async send(request: SendRequest): Promise<Exchange> {
        const { status, retryAfter } = answer(request, sent);
        const exchange = {
          seq: sent.length + 1, key: request.key, method: request.method, path: request.path, requestHeaders: {}, requestBody: request.json, status,
          responseHeaders: retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }, bodyText: '{}', json: {}, startedAt: now, durationMs: 5, bucket: 'generation', retriedAfter429: 0, note: request.note,
        } as Exchange;
        now += 5;
        sent.push(exchange);
        return exchange;
      },
    },
    clock: { advance: async (_key: string, seconds: number) => (clockMoves ? (advanced.push(seconds), (now += seconds * 1000), true) : false) },
    note: (message: string) => notes.push(message),
    now: () => now,
    sleep: async (ms: number) => {
      slept.push(ms);
      now += ms;
    },
  } as unknown as CheckContext;
  return { ctx, sent, notes, slept, advanced };
}

const isConfirm = (request: SendRequest) => request.note === 'is the key still over its limit?';

describe('whileRefused', () => {
  it('when the window reopens during the first observation, then it waits the announced seconds and concludes on a fresh refusal', async () => {
    // Refused with 2 s announced; the first confirmation is admitted (the oldest request
    // of a sliding log left), every later request is refused for a whole window.
    let confirms = 0;
    const { ctx, slept, notes } = scriptedContext((request) => {
      if (isConfirm(request) && ++confirms === 1) return { status: 400 };
      return request.key === 'second' ? { status: 429, retryAfter: confirms === 0 ? 2 : 60 } : { status: 400 };
    });

    const observed = await whileRefused(ctx, async (held) => held.refused.seq);

    expect(observed.held?.refused.responseHeaders['retry-after']).toBe('60');
    expect(slept).toHaveLength(1);
    // The announced 2 s from the refusal's answer, and a quarter second for the rounding.
    expect(slept[0]).toBeGreaterThanOrEqual(2000);
    expect(slept[0]).toBeLessThan(2300);
    expect(notes.some((n) => n.includes('fresh window'))).toBe(true);
  });

  it('when every try is spoiled by a reopening, then it gives up after the last with the reason of each, having waited a whole window before it', async () => {
    const { ctx, slept } = scriptedContext((request) => (isConfirm(request) ? { status: 400 } : request.key === 'second' ? { status: 429, retryAfter: 1 } : { status: 400 }));

    const observed = await whileRefused(ctx, async () => undefined);

    expect(observed.held).toBeUndefined();
    expect(observed.held === undefined && observed.reason.match(/try \d: the window reopened/g)).toHaveLength(REFUSAL_TRIES);
    // First the announced second, then the window of 60 s and one more.
    expect(slept.map((ms) => Math.round(ms / 1000))).toEqual([1, 61]);
  });

  it('when the observation is costly and the refusal ends within the second, then it is not made until a refusal that lasts', async () => {
    let refusals = 0;
    const { ctx } = scriptedContext((request) => {
      if (request.key !== 'second' || isConfirm(request)) return { status: 429, retryAfter: 60 };
      return { status: 429, retryAfter: ++refusals === 1 ? 1 : 60 };
    });
    const observedOn: number[] = [];

    const observed = await whileRefused(ctx, async (held) => observedOn.push(Number(held.refused.responseHeaders['retry-after'])), { costly: true });

    expect(observed.held).toBeDefined();
    expect(observedOn).toEqual([60]);
  });

  it('when the implementation has a sandbox clock, then the fresh window is reached by moving it rather than by waiting', async () => {
    let confirms = 0;
    const { ctx, slept, advanced } = scriptedContext((request) => {
      if (isConfirm(request) && ++confirms === 1) return { status: 400 };
      return { status: 429, retryAfter: 7 };
    }, true);

    const observed = await whileRefused(ctx, async () => undefined);

    expect(observed.held).toBeDefined();
    expect(advanced).toEqual([7]);
    expect(slept).toEqual([]);
  });

  it('when the result itself cannot tell, then the reason comes from the check and the next try is made', async () => {
    let tries = 0;
    const { ctx } = scriptedContext(() => ({ status: 429, retryAfter: 60 }));

    const observed = await whileRefused(ctx, async () => ++tries, { conclusive: (result) => (result < 2 ? 'answered 201 as the window may have reopened' : undefined) });

    expect(observed.held && observed.result).toBe(2);
  });
});

describe('whileRefused on a machine too loaded to hold a short window', () => {
  // Every confirmation comes after the window reopened, as on a runner held for seconds
  // between requests: no try can show the key still refused after the observation.
  const reopensBeforeEveryConfirm = (observer: (request: SendRequest) => Scripted) =>
    scriptedContext((request) => (isConfirm(request) ? { status: 400 } : request.key === 'second' ? { status: 429, retryAfter: 1 } : observer(request)));
  const observeMain = (ctx: CheckContext) => ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatars', json: {}, on429: 'return' });

  it('when another key is refused after sending nothing, then that refusal concludes the first try without a confirmation', async () => {
    const { ctx, sent } = reopensBeforeEveryConfirm(() => ({ status: 429, retryAfter: 1 }));

    const observed = await whileRefused(ctx, () => observeMain(ctx), { standsAlone: (exchange) => refusedBelowOwnLimit(ctx, exchange) });

    expect(observed.held?.key).toBe('second');
    expect(observed.held && observed.result.status).toBe(429);
    expect(sent.filter((e) => isConfirm({ note: e.note } as SendRequest))).toHaveLength(0);
  });

  it('when another key is admitted, then that proves nothing unconfirmed, and the run says it could not conclude', async () => {
    const { ctx } = reopensBeforeEveryConfirm(() => ({ status: 400 }));

    const observed = await whileRefused(ctx, () => observeMain(ctx), { standsAlone: (exchange) => refusedBelowOwnLimit(ctx, exchange) });

    expect(observed.held).toBeUndefined();
  });
});

describe('refusedBelowOwnLimit', () => {
  // The scripted service's shortest window: 3 generation requests a minute. The main key's
  // first `admitted` creates are admitted, every later one refused announcing `retryAfter`.
  const lastOf = async (sends: number, admitted: number, retryAfter: number | undefined) => {
    const { ctx } = scriptedContext((_request, before) => (before.filter((e) => e.key === 'main').length < admitted ? { status: 201 } : { status: 429, ...(retryAfter === undefined ? {} : { retryAfter }) }));
    const send = () => ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatars', json: {}, on429: 'return' });
    for (let i = 1; i < sends; i++) await send();
    return { ctx, answer: await send() };
  };

  it('when the key sent nothing before its 429, then no window of its own refused it', async () => {
    const { ctx, answer } = await lastOf(1, 0, 30);

    expect(refusedBelowOwnLimit(ctx, answer)).toBe(true);
  });

  it('when the key sent half its limit or more within the last two windows, then its own window may have refused it', async () => {
    const { ctx, answer } = await lastOf(3, 2, 30);

    expect(answer.status).toBe(429);
    expect(refusedBelowOwnLimit(ctx, answer)).toBe(false);
  });

  it('when the 429 announces a wait longer than the shortest window, then it may be a longer window of its own (the day\'s)', async () => {
    const { ctx, answer } = await lastOf(1, 0, 3600);

    expect(refusedBelowOwnLimit(ctx, answer)).toBe(false);
  });

  it("when the 429 names a longer window's limit, then it may be that window's, however short the wait it announced", async () => {
    const { ctx, answer } = await lastOf(1, 0, 30);
    answer.responseHeaders['ratelimit-limit'] = '500';

    expect(refusedBelowOwnLimit(ctx, answer)).toBe(false);
  });

  it('when the answer is no 429, then it refused nothing', async () => {
    const { ctx, answer } = await lastOf(1, 5, undefined);

    expect(answer.status).toBe(201);
    expect(refusedBelowOwnLimit(ctx, answer)).toBe(false);
  });
});

describe('surelyRefusedUntil', () => {
  it('when a 429 announces 3 s, then the refusal surely holds for 2 s from when its request was sent', () => {
    const refused = { startedAt: 10_000, durationMs: 40, responseHeaders: { 'retry-after': '3' } } as unknown as Exchange;

    expect(surelyRefusedUntil(refused)).toBe(12_000);
  });
});
