// The receiver mode: the runner plays the sender against a webhook receiver. Correct
// receivers pass (this project's helper and one written here without its code), and a
// receiver with one rule broken fails exactly the check of that rule.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createContractAjv } from '../../contract/schemas.ts';
import { CONTRACT_PROFILE, parseProfile } from '../src/implementation/profile.ts';
import { EVENT_TYPES, EventFactory, unusualForm, usualForm } from '../src/receiver-checks/events.ts';
import { RECEIVER_CHECKS } from '../src/receiver-checks/index.ts';
import { planReceiverRun, runReceiverConformance, type ReceiverRunOptions } from '../src/receiver-checks/run.ts';
import type { Report } from '../src/report/model.ts';
import { RECEIVER_SECRET, type ReceiverFlaw, startClientReceiver, startIndependentReceiver } from './fixtures/receivers.ts';
import { INDEPENDENT_PROFILE } from './helpers.ts';

const EVENT_SCHEMAS = { 'avatar.ready': 'AvatarReadyEvent', 'avatar.failed': 'AvatarFailedEvent', 'avatar_video.ready': 'AvatarVideoReadyEvent', 'avatar_video.failed': 'AvatarVideoFailedEvent' } as const;

function judge(url: string, extra: Partial<ReceiverRunOptions> = {}): Promise<Report> {
  return runReceiverConformance({ url, signingSecret: RECEIVER_SECRET, timeoutSeconds: 5, ...extra });
}

function failed(report: Report): string[] {
  return report.results.filter((r) => r.outcome === 'failed').map((r) => `${r.id} (${r.failure?.clause}): ${r.failure?.message}`);
}

describe('the events the runner sends', () => {
  it('when made from the contract, then each type is a valid event of its schema, with fresh IDs and a later job each time', () => {
    const ajv = createContractAjv();
    const factory = new EventFactory({ profile: CONTRACT_PROFILE, now: Date.now, webhookUrl: 'http://127.0.0.1:1/hooks' });
    const made = EVENT_TYPES.map((type) => factory.make(type));
    for (const event of made) {
      const validate = ajv.getSchema(`#/components/schemas/${EVENT_SCHEMAS[event.type]}`)!;
      expect(validate(event.body), JSON.stringify(validate.errors)).toBe(true);
      expect(event.body.type).toBe(event.type);
    }
    expect(new Set(made.map((e) => e.id)).size).toBe(4);
    expect(made.map((e) => e.objectCreatedAt)).toEqual([...made.map((e) => e.objectCreatedAt)].sort());
    expect(new Set(made.map((e) => e.objectCreatedAt)).size).toBe(4);
  });

  it('when written in the unusual form, then it is the same JSON value in other bytes than JSON.stringify writes', () => {
    const factory = new EventFactory({ profile: CONTRACT_PROFILE, now: Date.now, webhookUrl: 'http://127.0.0.1:1/hooks' });
    const event = factory.make('avatar.ready', (record) => void (record.name = 'Zoë 🎬 "quoted" \\ back/slash'));
    const text = unusualForm(event.body);
    expect(JSON.parse(text)).toEqual(event.body);
    expect(text).not.toBe(usualForm(event.body).toString());
    expect(JSON.stringify(JSON.parse(text))).not.toBe(text);
    expect(text).toContain('\\u00eb');
    expect(text).toContain('\\/');
  });

  it('when the receiver was written for another sender, then its envelope, state names and type member are used', () => {
    const factory = new EventFactory({ profile: INDEPENDENT_PROFILE, now: () => 1_800_000_000_000, webhookUrl: 'http://127.0.0.1:1/hooks' });
    const event = factory.make('avatar_video.failed');
    const object = (event.body.data as { object: Record<string, unknown> }).object;
    expect(Object.keys(event.body).sort()).toEqual(['created', 'data', 'event', 'id']);
    expect(event.body.event).toBe('avatar_video.failed');
    expect(typeof event.body.created).toBe('number');
    expect(object.state).toBe('FAILED');
    expect(object).not.toHaveProperty('status');
  });
});

describe('the sender\'s format in an implementation profile', () => {
  it('when its envelope uses a placeholder it does not know, then the profile is refused naming the member', () => {
    expect(() => parseProfile({ profile: 1, webhook_format: { envelope: { id: '{{id}}', kind: '{{kind}}' } } })).toThrow(
      'webhook_format.envelope: {{kind}} is not a placeholder here; use {{id}}, {{type}}, {{object}}, {{created}}, {{created_unix}} (placeholder)',
    );
  });

  it('when it names no format, then the source\'s headers and v1= are used', () => {
    expect(parseProfile({ profile: 1 }).webhookFormat).toEqual({
      headers: { eventId: 'X-Service-Event-Id', timestamp: 'X-Service-Timestamp', signature: 'X-Service-Signature' },
      signaturePrefix: 'v1=',
      envelope: null,
    });
  });
});

describe('a correct receiver', () => {
  it('when it is this project\'s receiver helper, then every check passes and each event is handled once', async () => {
    const receiver = await startClientReceiver();
    try {
      const report = await judge(receiver.url);
      expect(failed(report)).toEqual([]);
      expect(report.results.map((r) => [r.id, r.outcome])).toEqual(RECEIVER_CHECKS.map((c) => [c.id, 'passed']));
      expect(report.verdict).toBe('pass');
      expect(report.exitCode).toBe(0);
      expect(new Set(receiver.handled).size).toBe(receiver.handled.length);
      // Four types, one each of signature, timestamp, raw body and duplicates, two jobs out of order.
      expect(receiver.handled).toHaveLength(10);
      expect(report.clauses.map((c) => [c.id, c.outcome])).toEqual([
        ['WH-SIGNATURE', 'passed'],
        ['WH-RECEIVER-VERIFY', 'passed'],
        ['WH-DUPLICATES', 'passed'],
        ['WH-ORDER', 'passed'],
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('when it is written from the source alone, without the project\'s verifier, then every check passes', async () => {
    const receiver = await startIndependentReceiver();
    try {
      const report = await judge(receiver.url);
      expect(failed(report)).toEqual([]);
      expect(report.counts).toMatchObject({ passed: RECEIVER_CHECKS.length, failed: 0, skipped: 0 });
    } finally {
      await receiver.close();
    }
  });

  it('when it answers slowly but correctly, then it passes with a warning that says how long it took', async () => {
    // Well past half the timeout and well short of it, so that a loaded machine moves neither line.
    const receiver = await startIndependentReceiver({ slow: { first: 1, ms: 1_600 } });
    try {
      const report = await judge(receiver.url, { timeoutSeconds: 3 });
      expect(failed(report)).toEqual([]);
      expect(report.verdict).toBe('pass');
      const first = report.results[0]!;
      expect(first.warnings?.[0]).toMatch(/^slow: a valid avatar\.ready event was answered after \d\.\d s, more than half the 3\.0 s a delivery is given/);
    } finally {
      await receiver.close();
    }
  });

  it('when it was written for a sender with other header names and signature prefix, then it passes with that sender\'s profile, and the contract\'s receiver does not', async () => {
    const headers = { eventId: 'X-Acme-Event', timestamp: 'X-Acme-Time', signature: 'X-Acme-Signature' };
    const profile = parseProfile({ profile: 1, name: 'Acme', webhook_format: { headers: { event_id: headers.eventId, timestamp: headers.timestamp, signature: headers.signature }, signature_prefix: 'sha256=' } });
    const acme = await startIndependentReceiver({ headers, prefix: 'sha256=' });
    const contract = await startClientReceiver();
    try {
      const passing = await judge(acme.url, { implementation: profile });
      expect(failed(passing)).toEqual([]);
      expect(passing.implementation).toBe('Acme');
      const refusing = await judge(contract.url, { implementation: profile, only: ['receiver.each-event-type-accepted'] });
      expect(failed(refusing)).toEqual([expect.stringMatching(/^receiver\.each-event-type-accepted \(WH-RECEIVER-VERIFY\): a valid avatar\.ready event was not acknowledged: it got 400/)]);
    } finally {
      await acme.close();
      await contract.close();
    }
  });
});

const BROKEN: { flaw: ReceiverFlaw; catches: string; clause: string }[] = [
  { flaw: 'no-signature-check', catches: 'receiver.signature-verified', clause: 'WH-RECEIVER-VERIFY' },
  { flaw: 'reserialized-json', catches: 'receiver.raw-body-verified', clause: 'WH-RECEIVER-VERIFY' },
  { flaw: 'no-timestamp-check', catches: 'receiver.timestamp-checked', clause: 'WH-RECEIVER-VERIFY' },
  { flaw: 'duplicate-409', catches: 'receiver.duplicates-acknowledged', clause: 'WH-DUPLICATES' },
  { flaw: 'duplicate-500', catches: 'receiver.duplicates-acknowledged', clause: 'WH-DUPLICATES' },
  { flaw: 'refuses-older-jobs', catches: 'receiver.any-order-across-jobs', clause: 'WH-ORDER' },
];

describe('a receiver with one rule broken', () => {
  it.each(BROKEN.map((b) => [b.flaw, b] as const))('when it has %s, then exactly the check of that rule fails, naming the clause', async (_flaw, broken) => {
    const receiver = await startIndependentReceiver({ flaw: broken.flaw });
    try {
      const report = await judge(receiver.url);
      expect(failed(report).map((f) => f.split(':')[0]), failed(report).join('\n')).toEqual([`${broken.catches} (${broken.clause})`]);
      const result = report.results.find((r) => r.id === broken.catches)!;
      expect(result.failure?.fix).toBeTruthy();
      expect(result.failure?.exchanges[0]).toMatch(/^> POST \(/);
      expect(report.verdict).toBe('fail');
      expect(report.exitCode).toBe(1);
      expect(report.clauses.find((c) => c.id === broken.clause)?.outcome).toBe('failed');
    } finally {
      await receiver.close();
    }
  });

  it('when it acknowledges a duplicate with 409, then the failure says what came back and why it matters', async () => {
    const receiver = await startIndependentReceiver({ flaw: 'duplicate-409' });
    try {
      const report = await judge(receiver.url, { only: ['WH-DUPLICATES'] });
      expect(report.results.map((r) => r.id)).toEqual(['receiver.duplicates-acknowledged']);
      expect(report.results[0]?.failure).toMatchObject({
        message: expect.stringContaining('the same delivery again was not acknowledged: it got 409'),
        received: expect.stringMatching(/^409/),
        expected: 'a 2xx answer',
      });
    } finally {
      await receiver.close();
    }
  });
});

describe('the run\'s bound', () => {
  it('when the receiver never answers, then each delivery ends at its time limit and the run ends within the bound it stated', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent = createServer(() => undefined);
    silent.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hooks`;
    try {
      const options = { timeoutSeconds: 0.3, only: ['receiver.duplicates-acknowledged', 'receiver.raw-body-verified'] };
      const plan = planReceiverRun({ url, signingSecret: RECEIVER_SECRET, ...options });
      expect(plan.deliveries).toBe(4);
      const started = Date.now();
      const report = await judge(url, options);
      expect(Date.now() - started).toBeLessThan(plan.boundMs);
      expect(report.boundSeconds).toBe(Math.ceil(plan.boundMs / 1000));
      expect(report.results.map((r) => [r.id, r.outcome])).toEqual([
        ['receiver.raw-body-verified', 'failed'],
        ['receiver.duplicates-acknowledged', 'failed'],
      ]);
      expect(report.results[0]?.failure?.message).toContain('no answer within 0.3 s');
      // Each delivery's connection was closed when its time ran out.
      await expect.poll(() => [...sockets].filter((socket) => !socket.destroyed).length).toBe(0);
    } finally {
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('when nothing listens at the URL, then the run is aborted as unreachable (exit 3)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const report = await judge(`http://127.0.0.1:${port}/hooks`);
    expect(report.verdict).toBe('aborted');
    expect(report.exitCode).toBe(3);
    expect(report.abort?.message).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+\/hooks: ECONNREFUSED/);
  });
});
