// The runner's own stalls are left out of what it waits for: a wait for a webhook lasts
// its stated time of the runner being awake, so a loaded machine never fails a correct
// implementation for a delivery that came while the runner was held.
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { signWebhook } from '../../contract/webhookSignature.ts';
import { WebhookReceiver } from '../src/receiver/server.ts';
import { CheckStalls, NO_STALLS, StallMeter, type Stalls } from '../src/stalls.ts';

const SECRET = 'whsec_stalls';

/** Holds the event loop as a loaded machine or a long synchronous step would. */
function hold(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: nothing else of the process runs meanwhile
  }
}

async function deliver(url: string, timestamp: number, body: string): Promise<number> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-event-id': 'evt_1', 'x-service-timestamp': String(timestamp), 'x-service-signature': signWebhook(SECRET, timestamp, body) }, body });
  await response.body?.cancel();
  return response.status;
}

describe('the stall meter', () => {
  it('when the event loop is held, then the hold is counted as a stall, even before the meter has ticked again', () => {
    const meter = new StallMeter();
    try {
      const from = Date.now();
      hold(300);
      const to = Date.now();
      // Asked in the same turn as the hold ended: the meter's tick has not run yet.
      expect(meter.within(from, to)).toBeGreaterThanOrEqual(250);
      expect(meter.within(from, to)).toBeLessThanOrEqual(to - from);
      // Held is busy too, and busy is never less than stalled.
      expect(meter.busyWithin(from, to)).toBeGreaterThanOrEqual(meter.within(from, to));
      expect(meter.busyWithin(from, to)).toBeLessThanOrEqual(to - from);
      // Nothing of an instant after it.
      expect(meter.within(to + 1, to + 1)).toBe(0);
    } finally {
      meter.stop();
    }
  });

  it('when the event loop is kept busy in steps too short to make a tick late, then the busy time is counted, not as a stall', async () => {
    const meter = new StallMeter();
    try {
      const from = Date.now();
      for (let step = 0; step < 20; step++) {
        hold(15);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const to = Date.now();
      // 300 ms held in all; a tick may have fallen in between any two steps.
      expect(meter.busyWithin(from, to)).toBeGreaterThanOrEqual(200);
    } finally {
      meter.stop();
    }
  });
});

describe("a check's view of the stalls", () => {
  it('when the runner was held while the check ran, then its result is to say it was judged under load, with what it left out', () => {
    const meter = new StallMeter();
    try {
      const view = new CheckStalls(meter);
      const from = Date.now();
      hold(400);
      const leftOut = view.within(from, Date.now());
      const to = Date.now();

      expect(leftOut).toBeGreaterThanOrEqual(350);
      expect(view.underLoad(from, to)).toMatch(/^judged under load: the runner's event loop was stalled \d\.\d s of the \d\.\d s the check ran; up to \d\.\d s of its stalls left out of an interval it judged or waited for$/);
    } finally {
      meter.stop();
    }
  });

  it('when the runner was busy in short steps and an upper bound left that out, then its result says how much', async () => {
    const meter = new StallMeter();
    try {
      const view = new CheckStalls(meter);
      const from = Date.now();
      for (let step = 0; step < 30; step++) {
        hold(15);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const to = Date.now();
      view.busyWithin(from, to);

      // Not stalled on a quiet machine; a loaded one may make some step a stall as well.
      expect(view.underLoad(from, to)).toMatch(/^judged (with the runner busy: |under load: .*; )up to \d\.\d s of its stalls and busy time left out of an upper bound it judged$/);
    } finally {
      meter.stop();
    }
  });

  it('when the runner was not held, then its result says nothing of load', async () => {
    const meter = new StallMeter();
    try {
      const view = new CheckStalls(meter);
      const from = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 100));

      expect(view.underLoad(from, Date.now())).toBeUndefined();
    } finally {
      meter.stop();
    }
  });
});

describe('the receiver, with the runner stalled', () => {
  async function receiverAt(clock: { now: number }, stalls: Stalls): Promise<WebhookReceiver> {
    return WebhookReceiver.start({ host: '127.0.0.1', port: 0, secret: SECRET, now: () => clock.now, stalls });
  }

  it('when a webhook arrives while the runner is stalled past the end of its wait, then the wait goes on and sees it', async () => {
    const meter = new StallMeter();
    const receiver = await receiverAt(
      {
        get now() {
          return Date.now();
        },
      },
      meter,
    );
    const socket = new Socket();
    try {
      const url = new URL(receiver.urlFor('late-job', 'ok'));
      const waitMs = 1000;
      const waiting = receiver.waitFor('late-job', 1, waitMs);
      await new Promise<void>((resolve, reject) => socket.once('error', reject).connect(Number(url.port), url.hostname, resolve));
      // The delivery is in the receiver's socket before the wait is over, and the runner is
      // held past its end: its timer comes due before the socket is read.
      const body = JSON.stringify({ id: 'evt_1', event: 'avatar.ready' });
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = [`POST ${url.pathname} HTTP/1.1`, `Host: ${url.host}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, 'X-Service-Event-Id: evt_1', `X-Service-Timestamp: ${timestamp}`, `X-Service-Signature: ${signWebhook(SECRET, timestamp, body)}`, 'Connection: close'];
      socket.write(`${headers.join('\r\n')}\r\n\r\n${body}`);
      hold(waitMs + 200);
      expect((await waiting).map((d) => d.label)).toEqual(['late-job']);
    } finally {
      socket.destroy();
      meter.stop();
      await receiver.close();
    }
  });

  it('when the runner was not stalled, then the wait ends at its stated time with what there is', async () => {
    const receiver = await receiverAt({ now: Date.now() }, NO_STALLS);
    try {
      receiver.urlFor('silent-job', 'ok');
      expect(await receiver.waitFor('silent-job', 1, 50)).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});
