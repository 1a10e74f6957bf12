import { defineCheck, SANDBOX } from '../../check.ts';
import type { CheckContext } from '../../context.ts';
import { validPromptAvatar, without } from '../../expect.ts';
import type { Exchange, KeyName } from '../../http.ts';
import { advertised } from '../../observe/rate-limit-headers.ts';
import { fail, skip } from '../../outcome.ts';
import type { Bucket } from '../../pacer.ts';

/** Requests in flight at once while a day is spent: enough to be quick, few enough to stay in a minute window. */
const MAX_IN_FLIGHT = 16;
/** Whole-second headers and the spread of one burst: requests this close to a window's start are counted either way. */
const BOUNDARY_MS = 1500;

export default defineCheck({
  id: 'rate-limits.daily-windows',
  title: 'Each bucket refuses a key for the day after its daily limit, with the day window in the headers, and admits it again when the day is over',
  asserts:
    "With a sandbox clock, on a key without jobs, for the generation and the read bucket: a day after the key's last request (so nothing earlier counts), the key is admitted exactly the daily limit of requests in its day window (the minute windows moved over with the clock as each 429 says), then refused with a 429 whose RateLimit-Limit is the daily limit, RateLimit-Remaining 0, and Reset and Retry-After no longer than a day; moving the clock by that Retry-After admits it again. Reset may read as the time until the window admits again (a fixed window, or a sliding one's oldest request leaving it) or, for a sliding window, until it is whole again: the count is judged in the window either reading describes, and Retry-After may come before Reset only in the second.",
  clauses: ['RL-BUCKETS', 'RL-HEADERS', 'RL-429'],
  decisions: ['ND-SANDBOX-CLOCK'],
  profiles: SANDBOX,
  needs: ['clock'],
  phase: 'clock',
  lane: 'requests',
  // Each bucket's day spent, sent back to back: at most twice the day and a minute's
  // requests admitted, a clock move per minute window, and the few around them.
  waits: (a) =>
    (['generation', 'read'] as const).reduce((sum, bucket) => {
      const [minute = 1, day = 0] = a.options.expectedLimits[bucket];
      return sum + (2 * day + minute + Math.ceil((2 * day) / minute) + 5) * a.each;
    }, 0),
  async run(ctx) {
    const key = (['empty', 'second'] as const).find((k) => ctx.hasKey(k) && ctx.clock.has(k));
    if (!key) skip('needs a key without jobs whose account has a sandbox clock (--empty-key or --second-key)');
    for (const bucket of ['generation', 'read'] as const) await spendDay(ctx, key, bucket);
  },
});

/** A request that counts against `bucket` and costs nothing: an invalid avatar, or a read of the account. */
function send(ctx: CheckContext, key: KeyName, bucket: Bucket, note: string): Promise<Exchange> {
  return bucket === 'generation'
    ? ctx.http.send({ key, method: 'POST', path: '/v1/avatars', json: without(validPromptAvatar(), 'prompt'), on429: 'return', pace: false, note })
    : ctx.http.send({ key, method: 'GET', path: '/v1/me', on429: 'return', pace: false, note });
}

function retryAfterOf(exchange: Exchange): number | undefined {
  const header = exchange.responseHeaders['retry-after'];
  return header !== undefined && /^\s*\d+\s*$/.test(header) ? Number(header) : undefined;
}

async function spendDay(ctx: CheckContext, key: KeyName, bucket: Bucket): Promise<void> {
  const [minuteLimit, dayLimit] = ctx.options.expectedLimits[bucket];
  const [minuteWindow, dayWindow] = ctx.options.windowSeconds;
  if (minuteLimit === undefined || dayLimit === undefined || minuteWindow === undefined || dayWindow === undefined) {
    skip(`no daily ${bucket} limit is expected (--expect-${bucket}-limits and --expect-windows name one limit)`);
  }
  // A whole day later nothing sent before counts, whether the day window is fixed or sliding.
  if (!(await ctx.clock.advance(key, dayWindow))) skip(`the sandbox clock of the ${key} key refused to move a day`);

  const admitted: Exchange[] = [];
  const minuteRefusals: Exchange[] = [];
  // A fixed day window that starts while the day is spent lets up to twice the limit through in a row.
  const mostAdmitted = 2 * dayLimit + minuteLimit;
  let batch = 1;
  let refusedInARow = 0;
  let refusal: Exchange | undefined;
  while (!refusal) {
    const answers = await Promise.all(Array.from({ length: batch }, () => send(ctx, key, bucket, `spending the ${bucket} day`)));
    admitted.push(...answers.filter((e) => e.status !== 429));
    const refused = answers.find((e) => e.status === 429);
    if (admitted.length > mostAdmitted) {
      fail({
        clause: 'RL-BUCKETS',
        message: `the ${key} key was admitted ${admitted.length} ${bucket} requests, moving over each minute window, and never refused for the day`,
        expected: `a 429 from the day window after at most ${dayLimit} requests in one day`,
        received: `${admitted.length} admitted; ${minuteRefusals.length} refusals that each lasted a minute window or less`,
        fix: `Count every request of the ${bucket} bucket in a day window as well, and refuse the key when it is full.`,
        exchanges: [admitted.at(-1)!],
      });
    }
    if (!refused) {
      batch = Math.max(1, Math.min(MAX_IN_FLIGHT, advertised(answers.at(-1)!)?.remaining ?? 1));
      refusedInARow = 0;
      continue;
    }
    const seconds = retryAfterOf(refused) ?? advertised(refused)?.reset;
    if (advertised(refused)?.limit === dayLimit || (seconds !== undefined && seconds > minuteWindow + 1)) {
      refusal = refused;
      break;
    }
    minuteRefusals.push(refused);
    // Moving over what a minute window's 429 announced did not admit the key: that is
    // what rate-limits.retry-after-admits judges, not a day's count.
    if (admitted.length === 0 || ++refusedInARow > 2) {
      skip(`moving the clock over the ${bucket} minute window as its 429 said did not admit the ${key} key again (see rate-limits.retry-after-admits and rate-limits.per-key)`);
    }
    // A minute window refuses: the clock moves over it as its 429 says (other checks judge those values).
    if (!(await ctx.clock.advance(key, Math.max(1, Math.min(minuteWindow, seconds ?? minuteWindow))))) skip(`the sandbox clock of the ${key} key refused a move`);
    batch = 1;
  }

  judgeRefusal(key, bucket, refusal, dayLimit, dayWindow);
  const readings = judgeCount(ctx, key, bucket, refusal, admitted, dayLimit, dayWindow);
  judgeRetryAfter(key, bucket, refusal, readings);

  // Retry-After is the time to wait before retrying: after it the key is admitted again.
  const wait = retryAfterOf(refusal) ?? advertised(refusal)!.reset;
  if (!(await ctx.clock.advance(key, wait))) skip(`the sandbox clock of the ${key} key refused a move`);
  const again = await send(ctx, key, bucket, 'after the day window reset');
  if (again.status === 429) {
    fail({
      clause: 'RL-429',
      message: `after the clock moved the ${wait} s of Retry-After, the ${key} key was still refused in the ${bucket} bucket`,
      expected: 'the key admitted once its day window is over',
      received: `429 with Retry-After ${again.responseHeaders['retry-after'] ?? '(absent)'}`,
      fix: 'Send in Retry-After the seconds until the window that refuses resets.',
      exchanges: [refusal, again],
    });
  }
}

function describeRefusal(refusal: Exchange): string {
  const header = (name: string) => refusal.responseHeaders[name] ?? '(absent)';
  return `RateLimit-Limit ${header('ratelimit-limit')}, -Remaining ${header('ratelimit-remaining')}, -Reset ${header('ratelimit-reset')}, Retry-After ${header('retry-after')}`;
}

function judgeRefusal(key: KeyName, bucket: Bucket, refusal: Exchange, dayLimit: number, dayWindow: number): void {
  const values = advertised(refusal);
  const retryAfter = retryAfterOf(refusal);
  if (!values || values.limit !== dayLimit || values.remaining !== 0 || values.reset > dayWindow + 1) {
    fail({
      clause: 'RL-HEADERS',
      message: `the 429 that refused the ${key} key for the day in the ${bucket} bucket does not describe the day window`,
      expected: `RateLimit-Limit ${dayLimit}, RateLimit-Remaining 0, RateLimit-Reset of at most ${dayWindow} s: the window that refuses is the active one`,
      received: describeRefusal(refusal),
      fix: 'When the day window is the one that refuses, send its limit, 0 and the seconds until it resets.',
      exchanges: [refusal],
    });
  }
  // A missing Retry-After is rate-limits.over-limit-429's to report; the wait then is Reset.
  if (retryAfter !== undefined && retryAfter > dayWindow + 1) {
    fail({
      clause: 'RL-429',
      message: `the 429 that refused the ${key} key for the day in the ${bucket} bucket announces Retry-After ${retryAfter}`,
      expected: `Retry-After in seconds, at most ${dayWindow}`,
      received: describeRefusal(refusal),
      fix: 'Send the seconds until the refusing window admits the key again in Retry-After.',
      exchanges: [refusal],
    });
  }
}

/**
 * What the refusal's Reset can mean. The source says "seconds until the active window
 * resets", which a fixed window reads one way (until it starts again, and admits) and a
 * sliding window either way: until it admits again (its oldest request leaves it), or
 * until it is whole again (its newest request leaves it). Either reading is accepted when
 * the requests admitted agree with it.
 */
type Reading = 'admits-again' | 'whole-again';

/** Requests within BOUNDARY_MS of a moment may fall on either side of it. */
function countSince(times: { earliest: number; latest: number }[], start: number): { surely: number; maybe: number } {
  return { surely: times.filter((t) => t.earliest >= start + BOUNDARY_MS).length, maybe: times.filter((t) => t.latest >= start - BOUNDARY_MS).length };
}

/**
 * The key must have been admitted exactly the daily limit in the day window that refused
 * it, as its Reset describes that window, in the account's time:
 * - read as "until it admits again", the window started `dayWindow - Reset` seconds before
 *   the refusal (a fixed window's start, or a sliding window's oldest request);
 * - read as "until it is whole again", the window is the day before the refusal (sliding),
 *   and it is whole again only when the last request admitted has left it: Reset reaches
 *   at least that far.
 * Answers which readings the requests agree with; fails when neither.
 */
function judgeCount(ctx: CheckContext, key: KeyName, bucket: Bucket, refusal: Exchange, admitted: Exchange[], dayLimit: number, dayWindow: number): Reading[] {
  const reset = advertised(refusal)!.reset;
  const refusedAt = ctx.clock.accountTime(key, refusal.startedAt).latest;
  const times = admitted.map((e) => ctx.clock.accountTime(key, e.startedAt));
  const fixedStart = refusedAt + reset * 1000 - dayWindow * 1000;
  const slidingStart = refusedAt - dayWindow * 1000;
  const lastAdmitted = Math.max(...times.map((t) => t.earliest));
  const counts = { 'admits-again': countSince(times, fixedStart), 'whole-again': countSince(times, slidingStart) };
  const holds = (reading: Reading) => counts[reading].surely <= dayLimit && dayLimit <= counts[reading].maybe;
  const readings = (['admits-again', 'whole-again'] as const).filter((reading) => holds(reading) && (reading === 'admits-again' || refusedAt + reset * 1000 + BOUNDARY_MS >= lastAdmitted + dayWindow * 1000));
  if (readings.length === 0) {
    const seen = (reading: Reading) => (counts[reading].surely === counts[reading].maybe ? `${counts[reading].surely}` : `${counts[reading].surely} to ${counts[reading].maybe}`);
    fail({
      clause: 'RL-BUCKETS',
      message: `the ${key} key was admitted ${seen('admits-again')} ${bucket} requests in the day window that then refused it, as its Reset describes it (${seen('whole-again')} in the day before the refusal)`,
      expected: `exactly ${dayLimit}, the daily limit of the ${bucket} bucket, in the window Reset describes: until it admits again (its start ${Math.round((refusedAt - fixedStart) / 1000)} s before the refusal), or, for a sliding window, until it is whole again (the day before the refusal, Reset reaching the last request admitted)`,
      received: `${admitted.length} admitted since the clock moved a day ahead; Reset ${reset} s`,
      fix: `Admit ${dayLimit} ${bucket} requests per key and day, then refuse until the day window resets.`,
      exchanges: [refusal],
    });
  }
  return readings;
}

/**
 * Retry-After is the wait before the key is admitted again. Where Reset reads only as
 * "until it admits again", Retry-After cannot be shorter; where it reads as "until it is
 * whole again", a sliding window admits sooner, and the move by Retry-After that follows
 * shows whether it does.
 */
function judgeRetryAfter(key: KeyName, bucket: Bucket, refusal: Exchange, readings: Reading[]): void {
  const retryAfter = retryAfterOf(refusal);
  const reset = advertised(refusal)!.reset;
  if (retryAfter === undefined || readings.includes('whole-again') || retryAfter + 1 >= reset) return;
  fail({
    clause: 'RL-429',
    message: `the 429 that refused the ${key} key for the day in the ${bucket} bucket announces Retry-After ${retryAfter}, before the day window resets`,
    expected: `Retry-After not before the day window resets (Reset ${reset}): the requests admitted show a window that admits again only then`,
    received: describeRefusal(refusal),
    fix: 'Send the seconds until the refusing window admits the key again in Retry-After.',
    exchanges: [refusal],
  });
}
