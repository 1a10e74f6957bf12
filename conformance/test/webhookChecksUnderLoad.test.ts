// The webhook checks' rules on a runner held while attempts arrived, as a loaded machine
// holds it: an attempt read seconds after its stamp is the runner's lateness, not the
// sender's. Seen on a run with four times as many processes as cores: an independent
// implementation's correct deliveries failed WH-TIMESTAMP ("arrived 1.1 s apart but their
// timestamps are 8 s apart") and WH-RETRY (a retry after a 200 the runner gave 7 s late,
// past the sender's 3 s timeout). The held spans are given here as the stall meter reports them.
import { describe, expect, it } from 'vitest';
import { WEBHOOK_DELIVERY } from '../../contract/numbers.ts';
import { acknowledgement, ANSWERED_IN_TIME_MS, attemptsAfter, heldBeforeAnswer, MAX_WATCH_AFTER_ACK_SECONDS, nextAttemptLatestSeconds, schedulePositions, watchAfterAckSeconds } from '../src/observe/acknowledgement.ts';
import { stampsDisagree } from '../src/checks/webhooks/timestamp.ts';
import type { Delivery } from '../src/receiver/server.ts';
import { NO_STALLS, type Stalls } from '../src/stalls.ts';

const T0 = 1_790_000_000_000;

function delivery(seq: number, stampSeconds: number, receivedAt: number): Delivery {
  return {
    seq, label: 'failed-avatar', mode: 'ok', receivedAt, method: 'POST', rawBody: '{}', json: {}, answered: 200, duplicate: false,
    headers: { 'x-service-event-id': 'evt_1', 'x-service-timestamp': String(stampSeconds), 'x-service-signature': 'v1=x' },
    verification: { ok: true },
  };
}

/** A meter that saw the runner held (stalled or busy) throughout [from, to] and at no other time. */
function heldDuring(from: number, to: number): Stalls {
  const overlap = (a: number, b: number) => Math.max(0, Math.min(b, to) - Math.max(a, from));
  return { within: overlap, busyWithin: overlap };
}

describe('webhooks.timestamp under load', () => {
  // The first attempt stamped at T0 and read 7 s later; the retry stamped 8 s after it and read at once.
  const earlier = delivery(1, T0 / 1000, T0 + 7_000);
  const later = delivery(2, T0 / 1000 + 8, T0 + 8_100);

  it('when the runner was held while the earlier attempt waited to be read, then stamps 8 s apart agree with arrivals 1.1 s apart', () => {
    expect(stampsDisagree(heldDuring(T0, T0 + 7_000), earlier, later)).toBeUndefined();
  });

  it('when the runner was never held, then the same stamps are not the times of the attempts', () => {
    expect(stampsDisagree(NO_STALLS, earlier, later)).toEqual({ stamped: 8, arrived: 1.1 });
  });

  it('when a retry carries the first attempt\'s stamp, then a runner held only before the first attempt does not excuse it', () => {
    const frozen = delivery(2, T0 / 1000, T0 + 15_000);

    expect(stampsDisagree(heldDuring(T0, T0 + 7_000), earlier, frozen)).toEqual({ stamped: 0, arrived: 8 });
  });
});

describe('webhooks.retried-after-failure under load', () => {
  it('when the runner was held 7 s between an attempt\'s stamp and reading it, then its 200 is not taken as one the sender got in time', () => {
    const late = delivery(2, T0 / 1000, T0 + 7_000);

    expect(heldBeforeAnswer(heldDuring(T0 + 50, T0 + 7_000), late)).toBeGreaterThan(ANSWERED_IN_TIME_MS);
  });

  it('when the runner read the attempt at once, then its 200 is the acknowledgement, however busy the runner was before the attempt', () => {
    const prompt = delivery(2, T0 / 1000, T0 + 40);

    expect(heldBeforeAnswer(heldDuring(T0 - 30_000, T0), prompt)).toBeLessThanOrEqual(ANSWERED_IN_TIME_MS);
  });
});

describe('webhooks.retried-after-failure: which 2xx ended the delivery', () => {
  // A sender whose first retry comes 0.4 s after the failure often stamps both in one
  // second: the retry is then the failed attempt byte for byte, as a copy of it would be.
  const failed = { ...delivery(1, T0 / 1000, T0 + 100), answered: 500 };
  const sameSecondRetry = delivery(2, T0 / 1000, T0 + 500);
  const laterRetry = delivery(3, T0 / 1000 + 2, T0 + 2_100);

  it('when the 2xx came to a repeat of the failed attempt, then it is not surely the end: a copy, or a retry stamped in the same second', () => {
    expect(acknowledgement(NO_STALLS, [failed, sameSecondRetry])).toMatchObject({ index: 1, sure: false });
  });

  it('when an attempt with a stamp of its own follows such a repeat, then its 2xx is the one judged, and only what comes after it was sent again', () => {
    const attempts = [failed, sameSecondRetry, laterRetry];

    expect(acknowledgement(NO_STALLS, attempts, 2)).toEqual({ index: 2, sure: true });
    expect(attemptsAfter(attempts, 1)).toEqual([laterRetry]);
  });

  it('when a copy of the acknowledged attempt arrives seconds later, then it is not an attempt sent again', () => {
    const lateCopy = { ...laterRetry, seq: 4, receivedAt: T0 + 6_000 };

    expect(attemptsAfter([failed, laterRetry, lateCopy], 1)).toEqual([]);
  });

  it('when the runner gave the 2xx after being held past the sender\'s likely timeout, then it is not surely the end', () => {
    const late = delivery(2, T0 / 1000 + 1, T0 + 8_000);

    expect(acknowledgement(heldDuring(T0 + 1_000, T0 + 8_000), [failed, late])).toMatchObject({ index: 1, sure: false });
  });

  it('when a copy stood before it, then the attempt\'s place in the schedule is taken both ways', () => {
    expect(schedulePositions([failed, sameSecondRetry, laterRetry], 2)).toEqual([2, 1]);
    expect(schedulePositions([failed, laterRetry], 1)).toEqual([1]);
  });
});

describe('webhooks.retried-after-failure: how long an acknowledged event is watched', () => {
  const options = { webhookFirstRetrySeconds: 0.4 };

  it('when the profile states a schedule, then until the next wait of it has passed at its latest, and a second more', () => {
    expect(watchAfterAckSeconds(options, { delaysSeconds: [0.4, 1.6, 6.4], jitter: 0.25 }, 1, 0.4)).toBeCloseTo(1.6 * 1.25 + 1);
  });

  it('when it states none, then twice the wait seen before the acknowledged attempt, with the contract\'s jitter', () => {
    expect(watchAfterAckSeconds(options, undefined, 1, 0.5)).toBeCloseTo(2 * 0.5 * (1 + WEBHOOK_DELIVERY.jitter) + 1);
  });

  it('when the schedule has ended at the acknowledged attempt, then only the first retry\'s short pause', () => {
    expect(watchAfterAckSeconds(options, { delaysSeconds: [0.4], jitter: 0 }, 1, 0.4)).toBe(0.4);
  });

  it("when the sender keeps the contract's schedule, then its second wait is past the watch, and only the first retry's pause is watched", () => {
    const { retryDelaysSeconds, jitter } = WEBHOOK_DELIVERY;
    const contract = { webhookFirstRetrySeconds: retryDelaysSeconds[0]! };

    expect(nextAttemptLatestSeconds(contract, { delaysSeconds: retryDelaysSeconds, jitter }, 1, retryDelaysSeconds[0])).toBeGreaterThan(MAX_WATCH_AFTER_ACK_SECONDS);
    expect(watchAfterAckSeconds(contract, { delaysSeconds: retryDelaysSeconds, jitter }, 1, retryDelaysSeconds[0])).toBe(Math.min(2, retryDelaysSeconds[0]!));
  });

  it('when the next wait is minutes long, then only the first retry\'s pause, never the minutes', () => {
    expect(watchAfterAckSeconds({ webhookFirstRetrySeconds: 60 }, { delaysSeconds: [60, 300], jitter: 0.1 }, 1, 60)).toBe(2);
  });
});
