import { firstRetryLatestSeconds, type ResolvedOptions } from '../../options.ts';
import { WEBHOOK_EVENT_ID_HEADER, WEBHOOK_TIMESTAMP_HEADER } from '../../../../contract/webhookSignature.ts';
import { defineCheck, STATEFUL } from '../../check.ts';
import { REACTION_MS } from '../../clock.ts';
import type { CheckContext } from '../../context.ts';
import { describe } from '../../expect.ts';
import type { Exchange } from '../../http.ts';
import { at } from '../../implementation/profile.ts';
import { describeDelivery } from '../../observe/arrivals.ts';
import { fail, notApplicable, skip } from '../../outcome.ts';
import type { Delivery } from '../../receiver/server.ts';

/** Between two reads of the log. */
const LOG_POLL_MS = 200;
/** How long after the retry the replay is asked for: over a second, so that its timestamp is another. */
const REPLAY_AFTER_MS = 1100;

const LABEL = 'delivery-log';

export default defineCheck({
  id: 'webhooks.delivery-log-replay',
  title: 'The delivery log shows a failed attempt, and a replay sends the event again, signed afresh',
  asserts:
    "Where the implementation profile names a webhook delivery log: for an event whose receiver answered 500 to the first attempt, the event's log lists that attempt with status 500 and not succeeded; once the event is no longer pending, a replay is accepted and the receiver gets the event again with the same event ID, a valid signature and a timestamp later than the failed attempt's, and the log then ends with a replay attempt that succeeded. Another account cannot read the event.",
  clauses: ['WH-EVENT-ID', 'WH-SIGNATURE', 'WH-TIMESTAMP', 'AUTH-ACCOUNT'],
  decisions: ['ND-WEBHOOK-LOG'],
  profiles: STATEFUL,
  // The source has no delivery log: an implementation without one is not wrong.
  notRequiredIn: ['core', 'production'],
  needs: ['receiver'],
  creates: () => ({ avatar: 1 }),
  // After the credit checks, so that its job changes none of their figures, and after the
  // webhook checks, which count the run's deliveries (it needs no clock, and uses one).
  phase: 'clock',
  // Its avatar's end, the first attempt after it, the retry, the log's settling twice, the
  // second between the retry and the replay, and the replay's delivery.
  // The log settles within a delivery (the sender records an attempt as it ends it).
  waits: (a) => a.job('avatar') + a.delivery + retryWaitSeconds(a.options, a.clock) + 2 * a.delivery + REPLAY_AFTER_MS / 1000 + a.delivery,
  async run(ctx) {
    const log = ctx.shape.profile.webhookLog;
    if (!log) notApplicable('the implementation profile names no webhook delivery log (webhook_log)');
    await ctx.world.allSettled();
    const receiver = ctx.receiver!;
    const url = ctx.world.webhookUrl(LABEL, 'fail-first');
    const body = ctx.shape.avatarBody({ type: 'prompt', name: 'Conformance delivery log', prompt: 'A presenter whose webhook is sent again.' }, { webhookUrl: url });
    const create = await ctx.http.send({ key: 'main', method: 'POST', path: '/v1/avatars', json: body, note: 'avatar whose event is replayed' });
    const jobId = ctx.shape.isCreated('avatar', create.status) ? ctx.shape.createdId('avatar', create.json) : undefined;
    if (!jobId) fail({ clause: 'ND-WEBHOOK-LOG', message: `the avatar for the delivery log was not accepted: ${describe(create)}`, expected: 'the create accepted', received: describe(create), exchanges: [create] });

    // The first attempt, answered 500: due when the avatar ends, so awaited for as long as
    // an avatar takes and a delivery. Only when it does not come is the avatar read, to
    // say which of the two was missing.
    const [failed] = await receiver.waitFor(LABEL, 1, (ctx.options.jobSeconds.avatar + ctx.options.webhookRetryTimeoutSeconds) * 1000);
    if (!failed) {
      if (!(await ended(ctx, jobId))) skip(`the avatar for the delivery log did not reach ${ctx.shape.nameOf('ready')} or ${ctx.shape.nameOf('failed')} within ${ctx.options.jobSeconds.avatar} s`);
      skip(`no delivery of the ${LABEL} event arrived within ${ctx.options.webhookRetryTimeoutSeconds} s of its avatar's end (see webhooks.event-type-matches-state)`);
    }
    const eventId = failed.headers[WEBHOOK_EVENT_ID_HEADER.toLowerCase()];
    if (!eventId) skip(`the delivery carries no ${WEBHOOK_EVENT_ID_HEADER} (see webhooks.event-id-stable)`);
    const eventPath = log.event.replace('{id}', encodeURIComponent(eventId));

    // Its retry, sooner with a sandbox clock; then the event is at rest (delivered).
    const moved = ctx.clock.has('main');
    if (moved) {
      await ctx.sleep(Math.max(0, failed.receivedAt + REACTION_MS - ctx.now())); // the sender schedules it once it has the failure
      await ctx.clock.advance('main', Math.ceil(firstRetryLatestSeconds(ctx.options)) + 1);
    }
    const retried = (await receiver.waitFor(LABEL, 2, retryWaitSeconds(ctx.options, moved) * 1000))[1];
    if (!retried) skip(`the ${LABEL} event was not retried after the 500 (see webhooks.retried-after-failure)`);
    // What the scheduled attempts get wrong is their own checks' to report: a replay is judged against attempts that hold.
    for (const d of [failed, retried]) if (!d.verification.ok) skip(`a scheduled delivery of the event does not verify (${d.verification.message}; see webhooks.signature and webhooks.timestamp)`);
    if (retried.headers[WEBHOOK_EVENT_ID_HEADER.toLowerCase()] !== eventId) skip('the event ID changed between scheduled attempts (see webhooks.event-id-stable)');
    const atRest = await readUntil(ctx, eventPath, (event) => attemptsOf(event, log.attempts).length >= 2 && !pending(event));
    const before = attemptsOf(atRest.json, log.attempts);
    const logged = before.find((a) => at(a, log.statusCode) === 500 && at(a, log.succeeded) === false);
    if (atRest.status !== 200 || !logged) {
      fail({
        clause: 'ND-WEBHOOK-LOG',
        message: `GET ${eventPath} does not show the attempt the receiver answered 500: ${describe(atRest)}`,
        expected: `200 with an attempt at ${log.attempts} whose ${log.statusCode} is 500 and ${log.succeeded} false`,
        received: describe(atRest),
        fix: 'Log every attempt, failed ones included, with the receiver\'s status.',
        exchanges: [atRest],
        evidence: [describeDelivery(failed)],
      });
    }

    if (ctx.hasKey('second')) {
      const foreign = await ctx.http.send({ key: 'second', method: 'GET', path: eventPath, note: "another account reads the event's log" });
      if (foreign.status !== 404) {
        fail({ clause: 'AUTH-ACCOUNT', message: `another account's key read the event: ${describe(foreign)}`, expected: '404, as for any record of another account', received: describe(foreign), fix: 'Show an account its own events only.', exchanges: [foreign] });
      }
    }
    if (ctx.contract) {
      const listed = await ctx.http.send({ key: 'main', method: 'GET', path: `/v1/webhook-events?job_id=${encodeURIComponent(jobId)}`, note: "the job's events" });
      const ids = Array.isArray(at(listed.json, '/data')) ? (at(listed.json, '/data') as unknown[]).map((e) => at(e, '/id')) : [];
      if (!ids.includes(eventId)) {
        fail({ clause: 'ND-WEBHOOK-LOG', message: `GET /v1/webhook-events?job_id=${jobId} does not list ${eventId}: ${describe(listed)}`, expected: `the event ${eventId} in data`, received: describe(listed), exchanges: [listed] });
      }
    }

    // Over a second after the last attempt: a fresh timestamp must then differ from both
    // (and the replay cannot pass for a copy of the retry, which a receiver would drop).
    await ctx.sleep(Math.max(0, retried.receivedAt + REPLAY_AFTER_MS - ctx.now()));
    const replay = await ctx.http.send({ key: 'main', method: 'POST', path: log.replay.replace('{id}', encodeURIComponent(eventId)), note: 'replay the event' });
    if (!log.replayStatuses.includes(replay.status)) {
      fail({ clause: 'ND-WEBHOOK-LOG', message: `the replay of ${eventId}, delivered by now, was answered ${describe(replay)}`, expected: `${log.replayStatuses.join(' or ')}`, received: describe(replay), fix: 'Accept a replay of an event that is delivered or failed.', exchanges: [atRest, replay] });
    }
    const sent = (await receiver.waitFor(LABEL, 3, ctx.options.webhookRetryTimeoutSeconds * 1000))[2];
    if (!sent) {
      fail({ clause: 'ND-WEBHOOK-LOG', message: `the replay of ${eventId} was accepted and nothing arrived within ${ctx.options.webhookRetryTimeoutSeconds} s`, expected: 'one more delivery of the event', received: 'none', fix: 'Send the event again when a replay is accepted.', exchanges: [replay] });
    }
    judgeReplay(failed, sent, eventId);

    // Where the log marks each attempt's trigger, the replay is found by it: scheduled
    // attempts the sender went on with after a 2xx are WH-RETRY's to judge
    // (webhooks.retried-after-failure, webhooks.retry-schedule), and noted here.
    const trigger = log.trigger;
    if (trigger) {
      const replays = (event: unknown) => attemptsOf(event, log.attempts).slice(before.length).filter((a) => at(a, trigger.pointer) === trigger.replay);
      const after = await readUntil(ctx, eventPath, (event) => replays(event).length > 0 && !pending(event));
      const added = attemptsOf(after.json, log.attempts).slice(before.length);
      const replayed = replays(after.json);
      if (added.length > replayed.length) ctx.note(`the log lists ${added.length - replayed.length} scheduled attempt(s) besides the replay, after the delivery had succeeded: see webhooks.retried-after-failure and webhooks.retry-schedule`);
      if (replayed.length !== 1 || at(replayed[0], log.succeeded) !== true) {
        fail({
          clause: 'ND-WEBHOOK-LOG',
          message: `after the replay, GET ${eventPath} does not list one more attempt with ${trigger.pointer} ${trigger.replay} that succeeded: ${describe(after)}`,
          expected: `one attempt with ${trigger.pointer} ${trigger.replay} and ${log.succeeded} true after the ${before.length} before it`,
          received: describe(after),
          fix: 'Log the replay\'s attempt as any other, marked as a replay.',
          exchanges: [replay, after],
        });
      }
      return;
    }
    const after = await readUntil(ctx, eventPath, (event) => attemptsOf(event, log.attempts).length > before.length && !pending(event));
    const listed = attemptsOf(after.json, log.attempts);
    const last = listed.at(-1);
    // Without a trigger a scheduled attempt after one that succeeded cannot be told from the
    // replay: WH-RETRY's to report, and the log cannot then end with the replay alone.
    const acked = listed.findIndex((a) => at(a, log.succeeded) === true);
    const since = acked < 0 ? 0 : listed.length - acked - 1;
    if (since > 1) skip(`the log lists ${since - 1} attempt(s) besides the replay after attempt ${acked + 1} succeeded: its 2xx did not end the delivery (see webhooks.retried-after-failure), and without a trigger the replay cannot be told from them`);
    if (!last || at(last, log.succeeded) !== true || listed.length !== before.length + 1) {
      fail({
        clause: 'ND-WEBHOOK-LOG',
        message: `after the replay, GET ${eventPath} does not end with one more attempt, a succeeded replay: ${describe(after)}`,
        expected: `${before.length + 1} attempts, the last with ${log.succeeded} true`,
        received: describe(after),
        fix: 'Log the replay\'s attempt as any other.',
        exchanges: [replay, after],
      });
    }
  },
});

/** The replayed delivery: the same event, a valid signature over it, and a timestamp of its own. */
function judgeReplay(failed: Delivery, sent: Delivery, eventId: string): void {
  const evidence = [describeDelivery(failed), describeDelivery(sent)];
  if (sent.headers[WEBHOOK_EVENT_ID_HEADER.toLowerCase()] !== eventId) {
    fail({ clause: 'WH-EVENT-ID', message: `the replay arrived as event ${sent.headers[WEBHOOK_EVENT_ID_HEADER.toLowerCase()] ?? '(none)'}`, expected: `${WEBHOOK_EVENT_ID_HEADER}: ${eventId}, as on every attempt`, received: String(sent.headers[WEBHOOK_EVENT_ID_HEADER.toLowerCase()]), fix: 'Replay the event under its own ID, so receivers recognise a duplicate.', evidence });
  }
  if (!sent.verification.ok) {
    fail({ clause: 'WH-SIGNATURE', message: `the replay's signature does not verify: ${sent.verification.message}`, expected: 'a signature over the replay\'s own timestamp and body', received: sent.verification.message, fix: 'Sign every attempt, replays included, with the signing secret.', evidence });
  }
  const timestamp = (d: Delivery) => Number(d.headers[WEBHOOK_TIMESTAMP_HEADER.toLowerCase()]);
  if (!(timestamp(sent) > timestamp(failed))) {
    fail({
      clause: 'ND-WEBHOOK-LOG',
      message: `the replay came with ${WEBHOOK_TIMESTAMP_HEADER} ${timestamp(sent)}, not later than the failed attempt's ${timestamp(failed)}, sent more than a second before`,
      expected: 'a fresh timestamp, and a signature over it',
      received: String(timestamp(sent)),
      fix: 'Sign a replay when it is sent, as a new attempt, rather than sending an earlier attempt again.',
      evidence,
    });
  }
}

const attemptsOf = (event: unknown, pointer: string): unknown[] => {
  const attempts = at(event, pointer);
  return Array.isArray(attempts) ? attempts : [];
};

/** Whether the event still has an attempt due, where it says so as the contract does (`status: pending`); otherwise its attempts tell. */
const pending = (event: unknown): boolean => at(event, '/status') === 'pending';

/** Whether the avatar has ended, by one read: asked once it has had as long as an avatar takes. */
async function ended(ctx: CheckContext, id: string): Promise<boolean> {
  const read = await ctx.http.send({ key: 'main', method: 'GET', path: `/v1/avatars/${encodeURIComponent(id)}`, note: 'is the delivery-log avatar done?' });
  return read.status === 200 && ctx.shape.terminal(ctx.shape.state(read.json) ?? '') !== undefined;
}

/**
 * How long the retry is awaited from the failed attempt: with the clock moved past its
 * latest moment, the sender's reaction and a delivery; otherwise that moment in real time
 * and a delivery.
 */
function retryWaitSeconds(options: ResolvedOptions, moved: boolean): number {
  return (moved ? REACTION_MS / 1000 : firstRetryLatestSeconds(options) + 1) + options.webhookRetryTimeoutSeconds;
}

/**
 * Reads the event until `done` holds of it, or for a delivery's lateness of the runner
 * being awake (its own stalls lengthen it, stalls.ts); the last answer either way.
 */
async function readUntil(ctx: CheckContext, path: string, done: (event: unknown) => boolean): Promise<Exchange> {
  const started = ctx.now();
  for (;;) {
    const read = await ctx.http.send({ key: 'main', method: 'GET', path, note: 'the event in the delivery log' });
    if ((read.status === 200 && done(read.json)) || ctx.now() >= started + ctx.options.webhookRetryTimeoutSeconds * 1000 + ctx.stalls.within(started, ctx.now())) return read;
    await ctx.sleep(LOG_POLL_MS);
  }
}
