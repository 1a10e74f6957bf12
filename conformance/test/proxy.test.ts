// The proxy between clients and a service, in process: it passes exchanges and webhooks
// on unchanged, and judges each party from what it saw. In front of this project's
// server it passes this project's client and a correct client written from the source,
// and catches five broken clients, each by exactly the check of its rule; in front of a
// broken service with a correct client it fails the service, naming the clause. Every
// service check is also driven to failure from a record of traffic built by hand, which
// breaks exactly its rule, where a live flaw would be slow or would break other rules too.
import { createHmac } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENEROUS_PLAN, startTestService, type TestService } from '../../server/test/support/harness.ts';
import { signWebhook } from '../../contract/webhookSignature.ts';
import { createAvatarClient } from '../../client/src/index.ts';
import type { GenerationEngine } from '../../server/src/domain/engine.ts';
import { ContractValidator } from '../src/contract.ts';
import { CONTRACT_PROFILE } from '../src/implementation/profile.ts';
import { Shape } from '../src/implementation/shape.ts';
import { judgeTraffic } from '../src/proxy/judge.ts';
import { Injector, rewriteWebhookUrl, startProxy, type RunningProxy } from '../src/proxy/server.ts';
import { PROXY_CHECKS } from '../src/proxy/index.ts';
import { Traffic, type Seen, type SeenDelivery } from '../src/proxy/traffic.ts';
import { summary } from '../src/report/console.ts';
import type { Report } from '../src/report/model.ts';
import { independentFlow, startRecordingReceiver, type ClientFlaws } from './fixtures/clients.ts';
import { SECRET, startFixture, type Flaws } from './fixtures/reference.ts';

const shape = new Shape(CONTRACT_PROFILE);
const validator = ContractValidator.load();
/**
 * Every fifth request of a key is answered 429 by the proxy: each client meets one on its
 * fourth poll at the latest, and its first three polls go undisturbed.
 */
const INJECT = 0.2;
const CLIENT_CHECKS = ['client.waits-retry-after', 'client.polls-back-off', 'client.video-after-ready'];

async function behindProxy<T>(upstream: string, drive: (proxy: RunningProxy) => Promise<T>, options: { inject429?: number; signingSecret?: string } = {}): Promise<{ report: Report; result: T; proxy: RunningProxy }> {
  const startedAt = Date.now();
  const proxy = await startProxy({ upstream, port: 0, shape, validator, inject429: options.inject429 ?? 0 });
  try {
    const result = await drive(proxy);
    return { report: judgeTraffic({ traffic: proxy.traffic, shape, upstream, signingSecret: options.signingSecret, startedAt }), result, proxy };
  } finally {
    await proxy.close();
  }
}

/**
 * An avatar takes 4 s, so that a client backing off from 0.5 s (its third poll 3 s after
 * the create at the latest) polls it four times before it is ready: the fourth poll is
 * where the backoff rules start. A video takes 0.3 s and its file is a few bytes: the
 * built-in engine's rendering, seven at once on a small machine, would only add waiting.
 */
const SCRIPTED_ENGINE: GenerationEngine = {
  generate: (job, signal) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve({ status: 'ready', result: {} }), job.kind === 'avatar' ? 4000 : 300);
      signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
    }),
  artifact: async () => ({ contentType: 'video/mp4', body: new Uint8Array(64).fill(7) }),
};

const failed = (report: Report) => report.results.filter((r) => r.outcome === 'failed').map((r) => `${r.id} (${r.failure?.clause}): ${r.failure?.message}`);
const outcomeOf = (report: Report, id: string) => report.results.find((r) => r.id === id)?.outcome;

describe('the proxy in front of this project\'s server', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ engine: SCRIPTED_ENGINE, env: { JOB_POLL_MS: '20' } });
  });
  afterAll(() => svc?.dispose());

  const account = () => svc.account({ credits: 1000, plan: GENEROUS_PLAN });

  // Every client runs at the same time behind a proxy of its own, on an account of its
  // own: the file takes as long as the slowest flow, not the sum.
  let flows: Promise<Record<string, Report>>;
  beforeAll(() => {
    const independent = async (flaws: ClientFlaws) => {
      const { api_key } = await account();
      const { report, result } = await behindProxy(svc.url, (proxy) => independentFlow(proxy.url, api_key, { flaws }), { inject429: INJECT });
      expect(result.video.status).toBe('ready');
      return report;
    };
    flows = (async () => {
      const ours = (async () => {
        const { api_key } = await account();
        const { report, result } = await behindProxy(
          svc.url,
          async (proxy) => {
            const client = createAvatarClient({ baseUrl: proxy.url, apiKey: api_key });
            const created = await client.createAvatar({ type: 'prompt', name: 'Proxy', prompt: 'A presenter by a window' });
            const avatar = await client.waitForTerminal('avatar', created.data!.id);
            const requested = await client.createAvatarVideo({ avatar_id: avatar.id, script: 'Hello through the proxy.' });
            const video = await client.waitForTerminal('avatar_video', requested.data!.id);
            const file = await fetch(video.video_url!);
            return { status: file.status, bytes: (await file.arrayBuffer()).byteLength };
          },
          { inject429: INJECT },
        );
        expect(result.status).toBe(200);
        expect(result.bytes).toBeGreaterThan(0);
        return report;
      })();
      const entries = await Promise.all([
        ours.then((report) => ['this project\'s client', report] as const),
        independent({}).then((report) => ['a correct client written from the source', report] as const),
        independent({ pollEveryMs: 50 }).then((report) => ['polls every 50 ms', report] as const),
        independent({ pollEveryMs: 200 }).then((report) => ['polls every 200 ms', report] as const),
        independent({ retryAfterFixedMs: 100 }).then((report) => ['retries a 429 after 100 ms', report] as const),
        independent({ retryAfterAsMilliseconds: true }).then((report) => ['reads Retry-After as milliseconds', report] as const),
        independent({ videoBeforeReady: true }).then((report) => ['asks for a video before its avatar is ready', report] as const),
      ]);
      return Object.fromEntries(entries);
    })();
    // The assertions below each await it; a failure here is reported by them.
    flows.catch(() => undefined);
  });

  it.each(['this project\'s client', 'a correct client written from the source'])('when %s drives create, poll, video and download, then every client check is judged and passes, and the service passes', async (name) => {
    const report = (await flows)[name]!;
    expect(failed(report)).toEqual([]);
    for (const id of CLIENT_CHECKS) expect(outcomeOf(report, id), `${id}: ${report.results.find((r) => r.id === id)?.reason}`).toBe('passed');
    expect(report.verdict).toBe('pass');
    expect(report.subject).toBe('proxy');
  }, 60_000);

  it.each([
    ['polls every 50 ms', 'client.polls-back-off', 'RL-CLIENT-BACKOFF'],
    ['polls every 200 ms', 'client.polls-back-off', 'RL-CLIENT-BACKOFF'],
    ['retries a 429 after 100 ms', 'client.waits-retry-after', 'RL-CLIENT-WAIT'],
    ['reads Retry-After as milliseconds', 'client.waits-retry-after', 'RL-CLIENT-WAIT'],
    ['asks for a video before its avatar is ready', 'client.video-after-ready', 'AV-READY-BEFORE-VIDEO'],
  ])('when a client %s, then exactly %s fails, naming %s', async (name, check, clause) => {
    const report = (await flows)[name]!;
    const failures = report.results.filter((r) => r.outcome === 'failed');
    expect(failures.map((r) => r.id), failed(report).join('\n')).toEqual([check]);
    expect(failures[0]!.failure!.clause).toBe(clause);
    expect(report.verdict).toBe('fail');
    expect(report.exitCode).toBe(1);
  }, 60_000);

  it('when a client asks for a video too early, then the service refused it and the proxy passed the refusal on unchanged', async () => {
    const { api_key } = await account();
    const proxy = await startProxy({ upstream: svc.url, port: 0, shape, validator });
    try {
      const created = await fetch(`${proxy.url}/v1/avatars`, { method: 'POST', headers: { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' }, body: '{"type":"prompt","name":"Early","prompt":"A face"}' });
      const { id } = (await created.json()) as { id: string };
      const direct = await svc.request('POST', '/v1/avatar-videos', { key: api_key, json: { avatar_id: id, script: 'Too early' } });
      const viaProxy = await fetch(`${proxy.url}/v1/avatar-videos`, { method: 'POST', headers: { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ avatar_id: id, script: 'Too early' }) });
      expect(viaProxy.status).toBe(direct.status);
      expect(viaProxy.headers.get('content-type')).toBe(direct.headers.get('content-type'));
      expect(((await viaProxy.json()) as { code: string }).code).toBe(direct.body.code);
    } finally {
      await proxy.close();
    }
  });
});

describe('the proxy in front of the reference fixture', () => {
  async function judged(flaws: Partial<Flaws>) {
    const fixture = await startFixture({ flaws });
    const receiver = await startRecordingReceiver();
    try {
      const { report, proxy } = await behindProxy(fixture.baseUrl, (p) => independentFlow(p.url, fixture.keys.main, { webhookUrl: receiver.url, download: false }), { signingSecret: SECRET });
      // Both webhooks reach the receiver through the proxy (the fixture retries a failure, so wait for them).
      await expect.poll(() => receiver.received.length, { timeout: 5000 }).toBeGreaterThanOrEqual(2);
      return { report, receiver, proxy };
    } finally {
      await receiver.close();
      await fixture.close();
    }
  }

  const BROKEN = [
    [{ noVideoUrl: true }, 'service.ready-video-has-url', 'VID-READY-URL'],
    [{ frozenRemaining: true }, 'service.rate-limit-headers', 'RL-HEADERS'],
    [{ signBodyOnly: true }, 'service.webhook-signature', 'WH-SIGNATURE'],
    [{ compatHeadersDiffer: true }, 'service.compat-headers-agree', 'RL-HEADERS-COMPAT'],
    [{ retryAfterOnSuccess: true }, 'service.retry-after-only-on-429', 'RL-RETRY-AFTER-ONLY-429'],
    [{ millisecondTimestamps: true }, 'service.webhook-timestamp', 'WH-TIMESTAMP'],
  ] as const;
  // The services run at the same time, each with a fixture and a client of its own.
  let runs: Promise<Awaited<ReturnType<typeof judged>>[]>;
  beforeAll(() => {
    runs = Promise.all([judged({}), ...BROKEN.map(([flaws]) => judged(flaws))]);
    runs.catch(() => undefined);
  });

  it('when a correct client uses a correct service, then every service check passes, and webhooks reach the client\'s receiver byte for byte, signed as the service signed them', async () => {
    const { report, receiver, proxy } = (await runs)[0]!;
    expect(failed(report)).toEqual([]);
    for (const id of ['service.rate-limit-headers', 'service.compat-headers-agree', 'service.retry-after-only-on-429', 'service.get-returns-record', 'service.ready-video-has-url', 'service.webhook-signature', 'service.webhook-timestamp', 'service.webhook-payload-matches-get', 'service.webhook-event-type']) {
      expect(outcomeOf(report, id), id).toBe('passed');
    }
    const delivered = proxy.traffic.deliveries;
    expect(delivered.length).toBeGreaterThanOrEqual(2);
    for (const [i, got] of receiver.received.slice(0, delivered.length).entries()) {
      expect(got.rawBody.equals(delivered[i]!.rawBody)).toBe(true);
      const timestamp = String(got.headers['x-service-timestamp']);
      expect(got.headers['x-service-signature']).toBe(`v1=${createHmac('sha256', SECRET).update(`${timestamp}.`).update(got.rawBody).digest('hex')}`);
    }
    // The service was told the proxy's address, never the receiver's.
    expect(JSON.stringify(proxy.traffic.deliveries.map((d) => d.json))).toContain(proxy.webhookBase);
    expect(proxy.traffic.deliveries.every((d) => d.receiver === receiver.url)).toBe(true);
  }, 30_000);

  it.each(BROKEN.map(([flaws, check, clause], i) => [flaws, check, clause, i + 1] as const))('when the service has the flaw %j, then exactly %s fails, naming %s', async (_flaws, check, clause, index) => {
    const { report } = (await runs)[index]!;
    const failures = report.results.filter((r) => r.outcome === 'failed');
    expect(failures.map((r) => r.id), failed(report).join('\n')).toEqual([check]);
    expect(failures[0]!.failure!.clause).toBe(clause);
    expect(report.verdict).toBe('fail');
  }, 30_000);
});

describe('the proxy in front of the reference fixture, when an account without credits asks for an avatar', () => {
  async function refused(flaws: Partial<Flaws>) {
    const fixture = await startFixture({ flaws });
    const receiver = await startRecordingReceiver();
    try {
      return await behindProxy(fixture.baseUrl, async (proxy) => {
        const answer = await fetch(`${proxy.url}/v1/avatars`, {
          method: 'POST',
          headers: { authorization: `Bearer ${fixture.keys.empty}`, 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'prompt', name: 'Broke', prompt: 'A face', webhook_url: receiver.url }),
        });
        await answer.arrayBuffer();
        // A job the refusal started announces itself at the address that create named: judged once it has.
        if (flaws.startJobOn402) await expect.poll(() => proxy.traffic.deliveries.length, { timeout: 5000 }).toBeGreaterThan(0);
        return answer.status;
      }, { signingSecret: SECRET });
    } finally {
      await receiver.close();
      await fixture.close();
    }
  }

  it('when the service refuses it with 402 insufficient_credits and starts nothing, then both checks of a 402 pass and nothing fails', async () => {
    const { report, result } = await refused({});
    expect(result).toBe(402);
    expect(failed(report)).toEqual([]);
    expect(outcomeOf(report, 'service.insufficient-credits-402')).toBe('passed');
    expect(outcomeOf(report, 'service.402-creates-nothing')).toBe('passed');
  });

  it.each([
    [{ insufficientCode: 'payment_required' }, 'service.insufficient-credits-402', 'CR-402'],
    [{ startJobOn402: true }, 'service.402-creates-nothing', 'CR-402-NO-JOB'],
  ] as const)('when the service has the flaw %j, then exactly %s fails, naming %s', async (flaws, check, clause) => {
    const { report, result } = await refused(flaws);
    expect(result).toBe(402);
    const failures = report.results.filter((r) => r.outcome === 'failed');
    expect(failures.map((r) => r.id), failed(report).join('\n')).toEqual([check]);
    expect(failures[0]!.failure!.clause).toBe(clause);
    expect(report.verdict).toBe('fail');
  }, 15_000);
});

/** An upstream that records what reached it and answers with headers a proxy must keep, and some it must drop. */
async function startEchoUpstream() {
  const seen: { method: string; url: string; rawHeaders: string[]; body: Buffer }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) });
      if (req.url === '/v1/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        for (let i = 0; i < 48; i++) res.write(Buffer.alloc(65_536, i));
        return void res.end();
      }
      res.writeHead(200, [
        ['Content-Type', 'application/json'],
        ['Set-Cookie', 'a=1'],
        ['Set-Cookie', 'b=2'],
        ['X-Custom', 'kept'],
        ['Connection', 'keep-alive, X-Hop'],
        ['X-Hop', 'dropped'],
        ['RateLimit-Limit', '77'],
        ['RateLimit-Remaining', '76'],
        ['RateLimit-Reset', '30'],
      ].flat());
      // Three writes: the answer streams through, chunked, as it was sent.
      res.write('{"id":');
      res.write('"acct_1",');
      res.end('"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) };
}

function raw(url: string, options: { method: string; path: string; headers: string[]; body?: Buffer }): Promise<{ status: number; rawHeaders: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    // Raw headers, in order: Node then sends exactly these, so Host is ours to add.
    const headers = ['Host', target.host, ...options.headers];
    const req = httpRequest({ hostname: target.hostname, port: target.port, method: options.method, path: options.path, headers: headers as unknown as Record<string, string> }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}


describe('judging a record of traffic', () => {
  const seen = (over: Partial<Seen>): Seen => ({
    seq: 1, key: 'key 1 (sk_test_…)', method: 'GET', path: '/v1/me', operationId: 'getMe', bucket: 'read', requestJson: undefined,
    arrivedAt: 1000, answeredAt: 1010, status: 200, responseHeaders: {}, responseJson: undefined, responseText: '', injected: false, ...over,
  });

  it('when the service accepts a create without the new ID, then service.get-returns-record fails naming AV-GET', () => {
    const traffic = new Traffic();
    traffic.exchanges.push(seen({ method: 'POST', path: '/v1/avatars', operationId: 'createAvatar', bucket: 'generation', status: 202, responseJson: { status: 'queued' }, responseText: '{"status":"queued"}' }));
    const result = judgeTraffic({ traffic, shape, upstream: 'http://127.0.0.1:9', startedAt: 0 }).results.find((r) => r.id === 'service.get-returns-record')!;
    expect(result.outcome).toBe('failed');
    expect(result.failure!.clause).toBe('AV-GET');
  });

  it('when nothing was seen, then every check is not applicable with its reason, and the verdict fails: nothing was judged', () => {
    const report = judgeTraffic({ traffic: new Traffic(), shape, upstream: 'http://127.0.0.1:9', startedAt: 0 });
    expect(report.results.filter((r) => r.outcome !== 'not_applicable').map((r) => r.id)).toEqual([]);
    for (const r of report.results) expect(r.reason?.length ?? 0, r.id).toBeGreaterThan(20);
    expect(report.verdict).toBe('fail');
    expect(summary(report, false)).toContain('No check had traffic to judge');
  });
});

/**
 * A record of traffic built by hand, as the proxy would have kept it: one exchange a
 * second, every rate-limited answer with the headers of one 60 s window counting down per
 * key and bucket (unless a case writes its own), every delivery stamped with its second
 * and signed with SECRET. Healthy as built; a case adds the one exchange or delivery that
 * breaks its rule.
 */
class HandBuilt {
  readonly traffic = new Traffic();
  readonly #counted = new Map<string, number>();
  static readonly KEY = 'key 1 (sk_test_…)';
  static readonly WINDOW_END_MS = 50_000;

  answer(over: Partial<Seen> & { headers?: Record<string, string | undefined> }): Seen {
    const seq = this.traffic.exchanges.length + 1;
    const arrivedAt = seq * 1000;
    const { headers, ...rest } = over;
    const exchange: Seen = {
      seq, key: HandBuilt.KEY, method: 'GET', path: '/v1/me', operationId: 'getMe', bucket: 'read', requestJson: undefined,
      arrivedAt, answeredAt: arrivedAt + 10, status: 200, responseHeaders: {}, responseJson: undefined, responseText: '', injected: false, ...rest,
    };
    if (exchange.responseJson !== undefined && !exchange.responseText) exchange.responseText = JSON.stringify(exchange.responseJson);
    const all: Record<string, string | undefined> = {};
    if (exchange.bucket && exchange.key) {
      const name = `${exchange.key}:${exchange.bucket}`;
      const used = (this.#counted.get(name) ?? 0) + 1;
      this.#counted.set(name, used);
      const limit = exchange.bucket === 'read' ? 120 : 10;
      const values = { limit: String(limit), remaining: String(Math.max(0, limit - used)), reset: String(Math.ceil((HandBuilt.WINDOW_END_MS - exchange.answeredAt) / 1000)) };
      for (const [n, v] of Object.entries(values)) all[`ratelimit-${n}`] = all[`x-ratelimit-${n}`] = v;
    }
    Object.assign(all, headers);
    exchange.responseHeaders = Object.fromEntries(Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined));
    this.traffic.exchanges.push(exchange);
    return exchange;
  }

  read(kind: 'avatar' | 'avatar_video', record: Record<string, unknown>, over: Partial<Seen> = {}): Seen {
    const id = String(record.id);
    return this.answer({ path: `/v1/${kind === 'avatar' ? 'avatars' : 'avatar-videos'}/${id}`, operationId: kind === 'avatar' ? 'getAvatar' : 'getAvatarVideo', responseJson: record, ...over });
  }

  create(kind: 'avatar' | 'avatar_video', requestJson: unknown, status: number, responseJson: unknown, headers: Record<string, string> = {}): Seen {
    const seen = this.answer({ method: 'POST', path: kind === 'avatar' ? '/v1/avatars' : '/v1/avatar-videos', operationId: kind === 'avatar' ? 'createAvatar' : 'createAvatarVideo', bucket: 'generation', requestJson, status, responseJson, headers });
    const id = shape.isCreated(kind, status) ? shape.createdId(kind, responseJson) : undefined;
    if (id) this.traffic.created.push({ kind, id, key: seen.key, at: seen.answeredAt });
    return seen;
  }

  deliver(create: Seen, event: Record<string, unknown>, over: { timestamp?: string; sign?: (timestamp: string, body: Buffer) => string } = {}): SeenDelivery {
    const seq = this.traffic.deliveries.length + 1;
    const arrivedAt = (this.traffic.exchanges.length + 1) * 1000 + 500;
    const rawBody = Buffer.from(JSON.stringify(event));
    const timestamp = over.timestamp ?? String(Math.floor(arrivedAt / 1000));
    const signature = (over.sign ?? ((t, body) => signWebhook(SECRET, Number(t), body)))(timestamp, rawBody);
    const delivery: SeenDelivery = {
      seq, key: HandBuilt.KEY, receiver: 'http://127.0.0.1:9/hooks', createSeq: create.seq, arrivedAt,
      headers: { 'content-type': 'application/json', 'x-service-timestamp': timestamp, 'x-service-signature': signature }, rawBody, json: event, receiverStatus: 200,
    };
    this.traffic.deliveries.push(delivery);
    return delivery;
  }

  judge(options: { shape?: Shape } = {}): Report {
    return judgeTraffic({ traffic: this.traffic, shape: options.shape ?? shape, upstream: 'http://127.0.0.1:9', signingSecret: SECRET, startedAt: 0 });
  }
}

const AVATAR = { id: 'av_1', object: 'avatar', name: 'Hand', status: 'ready', error: null };
const VIDEO = { id: 'vid_1', object: 'avatar_video', avatar_id: 'av_1', status: 'ready', video_url: 'https://cdn.example/vid_1.mp4', error: null };
const FAILED_VIDEO = { id: 'vid_2', object: 'avatar_video', avatar_id: 'av_1', status: 'failed', video_url: null, error: { code: 'render_failed', message: 'The render failed.' } };
const INSUFFICIENT = { type: 'about:blank', title: 'Payment Required', status: 402, code: 'insufficient_credits', credits_required: 20, credits_available: 0 };
const OVER_LIMIT = { type: 'about:blank', title: 'Too Many Requests', status: 429, code: 'rate_limit_exceeded' };

/**
 * Traffic in which every service check of the proxy has something to judge and finds it
 * right: an avatar and two videos (one failed) created, polled and announced, a 402 and a
 * 429 at the end (nothing after the 429, so no client wait is judged by a case's flaw).
 */
function healthy(): { built: HandBuilt; avatarCreate: Seen; videoCreate: Seen; refused: Seen } {
  const built = new HandBuilt();
  const avatarCreate = built.create('avatar', { type: 'prompt', name: 'Hand', prompt: 'A face', webhook_url: 'http://127.0.0.1:9/hooks' }, 202, { ...AVATAR, status: 'queued' });
  built.read('avatar', { ...AVATAR, status: 'processing' });
  built.read('avatar', AVATAR);
  built.deliver(avatarCreate, { id: 'evt_1', type: 'avatar.ready', data: { object: AVATAR } });
  const videoCreate = built.create('avatar_video', { avatar_id: 'av_1', script: 'Hello', webhook_url: 'http://127.0.0.1:9/hooks' }, 202, { ...VIDEO, status: 'queued', video_url: null });
  built.read('avatar_video', VIDEO);
  built.read('avatar_video', VIDEO);
  built.deliver(videoCreate, { id: 'evt_2', type: 'avatar_video.ready', data: { object: VIDEO } });
  const failedCreate = built.create('avatar_video', { avatar_id: 'av_1', script: 'Fail', webhook_url: 'http://127.0.0.1:9/hooks' }, 202, { ...FAILED_VIDEO, status: 'queued', error: null });
  built.read('avatar_video', FAILED_VIDEO);
  built.deliver(failedCreate, { id: 'evt_3', type: 'avatar_video.failed', data: { object: FAILED_VIDEO } });
  const refused = built.create('avatar', { type: 'prompt', name: 'Broke', prompt: 'A face', webhook_url: 'http://127.0.0.1:9/hooks' }, 402, INSUFFICIENT, { 'content-type': 'application/problem+json' });
  // Another key's 429: the first key's window goes on counting down after it.
  built.answer({ key: 'key 2 (sk_test_…)', status: 429, responseJson: OVER_LIMIT, headers: { 'retry-after': '1', 'ratelimit-remaining': '0', 'x-ratelimit-remaining': '0' } });
  return { built, avatarCreate, videoCreate, refused };
}

const SERVICE_CHECKS = PROXY_CHECKS.filter((check) => check.party === 'service').map((check) => check.id);

describe('judging the service from a record of traffic built by hand', () => {
  it('when every answer and webhook keeps its rule, then every service check of the proxy is judged and passes', () => {
    const report = healthy().built.judge();
    expect(failed(report)).toEqual([]);
    for (const id of SERVICE_CHECKS) expect(outcomeOf(report, id), `${id}: ${report.results.find((r) => r.id === id)?.reason}`).toBe('passed');
    expect(report.verdict).toBe('pass');
  });

  type Flaw = (record: ReturnType<typeof healthy>) => void;
  const BROKEN: [string, Flaw, string, string][] = [
    ['a ready avatar is later read processing', ({ built }) => void built.read('avatar', { ...AVATAR, status: 'processing' }), 'service.terminal-never-changes', 'ST-TERMINAL'],
    ['a failed video is later announced ready', ({ built, videoCreate }) => void built.deliver(videoCreate, { id: 'evt_9', type: 'avatar_video.ready', data: { object: { ...FAILED_VIDEO, status: 'ready', video_url: 'https://cdn.example/vid_2.mp4', error: null } } }), 'service.terminal-never-changes', 'ST-TERMINAL'],
    ['a failed avatar is read without an error object', ({ built }) => void built.read('avatar', { ...AVATAR, id: 'av_2', status: 'failed', error: null }), 'service.failed-has-error', 'AV-FAILED-ERROR'],
    ['a failed video is read without an error object', ({ built }) => void built.read('avatar_video', { ...FAILED_VIDEO, error: null }), 'service.failed-has-error', 'VID-FAILED-ERROR'],
    ['a ready video is read without video_url', ({ built }) => void built.read('avatar_video', { ...VIDEO, video_url: null }), 'service.ready-video-has-url', 'VID-READY-URL'],
    ['a webhook is stamped in milliseconds', ({ built, avatarCreate }) => void built.deliver(avatarCreate, { id: 'evt_9', type: 'avatar.ready', data: { object: AVATAR } }, { timestamp: String((built.traffic.exchanges.length + 1) * 1000 + 500) }), 'service.webhook-timestamp', 'WH-TIMESTAMP'],
    ['a webhook is stamped an hour late', ({ built, avatarCreate }) => void built.deliver(avatarCreate, { id: 'evt_9', type: 'avatar.ready', data: { object: AVATAR } }, { timestamp: String(built.traffic.exchanges.length + 1 + 3600) }), 'service.webhook-timestamp', 'WH-TIMESTAMP'],
    ['a webhook is signed over its body only', ({ built, avatarCreate }) => void built.deliver(avatarCreate, { id: 'evt_9', type: 'avatar.ready', data: { object: AVATAR } }, { sign: (_t, body) => `v1=${createHmac('sha256', SECRET).update(body).digest('hex')}` }), 'service.webhook-signature', 'WH-SIGNATURE'],
    ['a webhook has no top-level id', ({ built, avatarCreate }) => void built.deliver(avatarCreate, { type: 'avatar.ready', data: { object: AVATAR } }), 'service.webhook-payload-matches-get', 'WH-PAYLOAD-SHAPE'],
    ['a webhook\'s record lacks a member GET shows', ({ built, avatarCreate }) => void built.deliver(avatarCreate, { id: 'evt_9', type: 'avatar.ready', data: { object: { id: AVATAR.id, object: AVATAR.object, status: AVATAR.status, error: AVATAR.error } } }), 'service.webhook-payload-matches-get', 'WH-PAYLOAD-SHAPE'],
    ['a webhook\'s error differs from GET\'s', ({ built, videoCreate }) => void built.deliver(videoCreate, { id: 'evt_9', type: 'avatar_video.failed', data: { object: { ...FAILED_VIDEO, error: { code: 'other', message: 'Another error.' } } } }), 'service.webhook-payload-matches-get', 'WH-PAYLOAD-SHAPE'],
    ['a ready avatar is announced as a video', ({ built, avatarCreate }) => void built.deliver(avatarCreate, { id: 'evt_9', type: 'avatar_video.ready', data: { object: AVATAR } }), 'service.webhook-event-type', 'WH-TERMINAL'],
    ['a failed video is announced ready', ({ built, videoCreate }) => void built.deliver(videoCreate, { id: 'evt_9', type: 'avatar_video.ready', data: { object: FAILED_VIDEO } }), 'service.webhook-event-type', 'WH-TERMINAL'],
    ['a 429 carries no Retry-After', ({ built }) => void built.answer({ status: 429, responseJson: OVER_LIMIT, headers: { 'ratelimit-remaining': '0', 'x-ratelimit-remaining': '0' } }), 'service.over-limit-429', 'RL-429'],
    ['a 429 says Retry-After in milliseconds', ({ built }) => void built.answer({ status: 429, responseJson: OVER_LIMIT, headers: { 'retry-after': '1.5', 'ratelimit-remaining': '0', 'x-ratelimit-remaining': '0' } }), 'service.over-limit-429', 'RL-429'],
    ['a 429 carries another code', ({ built }) => void built.answer({ status: 429, responseJson: { ...OVER_LIMIT, code: 'too_many_requests' }, headers: { 'retry-after': '1', 'ratelimit-remaining': '0', 'x-ratelimit-remaining': '0' } }), 'service.over-limit-429', 'RL-429'],
    ['X-RateLimit-Remaining differs from RateLimit-Remaining', ({ built }) => void built.answer({ headers: { 'x-ratelimit-remaining': '999' } }), 'service.compat-headers-agree', 'RL-HEADERS-COMPAT'],
    ['X-RateLimit-* are missing', ({ built }) => void built.answer({ headers: { 'x-ratelimit-limit': undefined, 'x-ratelimit-remaining': undefined, 'x-ratelimit-reset': undefined } }), 'service.compat-headers-agree', 'RL-HEADERS-COMPAT'],
    ['a 200 carries Retry-After', ({ built }) => void built.answer({ headers: { 'retry-after': '1' } }), 'service.retry-after-only-on-429', 'RL-RETRY-AFTER-ONLY-429'],
    ['a 402 carries Retry-After', ({ built }) => void built.create('avatar', { type: 'prompt', name: 'Broke', prompt: 'A face' }, 402, INSUFFICIENT, { 'retry-after': '60' }), 'service.retry-after-only-on-429', 'RL-RETRY-AFTER-ONLY-429'],
    ['a success lacks RateLimit-Remaining (and its copy)', ({ built }) => void built.answer({ headers: { 'ratelimit-remaining': undefined, 'x-ratelimit-remaining': undefined } }), 'service.rate-limit-headers', 'RL-HEADERS'],
    ['a GET of one avatar answers another', ({ built }) => void built.read('avatar', { ...AVATAR, id: 'av_9' }, { path: '/v1/avatars/av_1' }), 'service.get-returns-record', 'AV-GET'],
    ['a GET of one video answers a record without an id', ({ built }) => void built.read('avatar_video', { ...VIDEO, id: undefined }, { path: '/v1/avatar-videos/vid_1' }), 'service.get-returns-record', 'VID-GET'],
    ['an accepted create carries no ID', ({ built }) => void built.create('avatar', { type: 'prompt', name: 'Anon', prompt: 'A face' }, 202, { status: 'queued' }), 'service.get-returns-record', 'AV-GET'],
    ['a 402 says payment_required', ({ built }) => void built.create('avatar', { type: 'prompt', name: 'Broke', prompt: 'A face' }, 402, { ...INSUFFICIENT, code: 'payment_required' }), 'service.insufficient-credits-402', 'CR-402'],
    ['a 402 of a read carries no code at all', ({ built }) => void built.answer({ status: 402, responseJson: { title: 'Payment Required', status: 402 } }), 'service.insufficient-credits-402', 'CR-402'],
    ['a create answered 402 carries a new ID', ({ built }) => void built.create('avatar_video', { avatar_id: 'av_1', script: 'Broke' }, 402, { ...INSUFFICIENT, id: 'vid_7', status: 'queued' }), 'service.402-creates-nothing', 'CR-402-NO-JOB'],
    ['a create answered 402 points Location at a record', ({ built }) => void built.create('avatar', { type: 'prompt', name: 'Broke', prompt: 'A face' }, 402, INSUFFICIENT, { location: '/v1/avatars/av_7' }), 'service.402-creates-nothing', 'CR-402-NO-JOB'],
    ['a webhook arrives at the address of a create answered 402', ({ built, refused }) => void built.deliver(refused, { id: 'evt_9', type: 'avatar.ready', data: { object: { ...AVATAR, id: 'av_7', name: 'Broke' } } }), 'service.402-creates-nothing', 'CR-402-NO-JOB'],
  ];

  it('when the cases are listed, then every service check of the proxy is driven to failure by one of them', () => {
    expect(new Set(BROKEN.map(([, , check]) => check))).toEqual(new Set(SERVICE_CHECKS));
  });

  it.each(BROKEN.map(([name, flaw, check, clause]) => ({ name, flaw, check, clause })))('when $name, then exactly $check fails, naming $clause', ({ flaw, check, clause }) => {
    const record = healthy();
    flaw(record);
    const report = record.built.judge();
    const failures = report.results.filter((r) => r.outcome === 'failed');
    expect(failures.map((r) => r.id), failed(report).join('\n')).toEqual([check]);
    expect(failures[0]!.failure!.clause).toBe(clause);
    expect(report.verdict).toBe('fail');
  });

  // The code of a 402 or a 429 is looked for where the implementation profile says codes are, as a service run looks.
  const TYPE_URI = new Shape({ ...CONTRACT_PROFILE, errors: { ...CONTRACT_PROFILE.errors, code: { pointer: '/type', form: 'uri' } } });
  const HEADER = new Shape({ ...CONTRACT_PROFILE, errors: { ...CONTRACT_PROFILE.errors, code: { header: 'X-Error-Code', form: 'value' } } });
  const ANYWHERE = new Shape({ ...CONTRACT_PROFILE, errors: { ...CONTRACT_PROFILE.errors, code: null } });
  const CODES = { 402: ['insufficient_credits', 'service.insufficient-credits-402', 'CR-402'], 429: ['rate_limit_exceeded', 'service.over-limit-429', 'RL-429'] } as const;
  it.each(
    ([402, 429] as const).flatMap((status) => {
      const [code, check, clause] = CODES[status];
      return [
        ['in a type URI', status, { type: `https://errors.example/${code}`, status }, {}, 'passed', TYPE_URI],
        ['in a type URI', status, { type: 'about:blank', code, status }, {}, 'failed', TYPE_URI],
        ['in a header', status, { status }, { 'x-error-code': code }, 'passed', HEADER],
        ['in a header', status, { code, status }, { 'x-error-code': 'payment_required' }, 'failed', HEADER],
        ['in a body member', status, { code, status }, {}, 'passed', shape],
        ['in a body member', status, { type: `https://errors.example/${code}`, status }, {}, 'failed', shape],
        ['anywhere in the body', status, { error: { reason: code } }, {}, 'passed', ANYWHERE],
        ['anywhere in the body', status, { error: { reason: `not_${code}_at_all` } }, {}, 'failed', ANYWHERE],
      ].map(([where, , body, headers, outcome, judgedBy]) => ({ where, status, body, headers, shown: `${JSON.stringify(body)}${Object.keys(headers as object).length > 0 ? ` and ${JSON.stringify(headers)}` : ''}`, outcome, judgedBy: judgedBy as Shape, check, clause })) as { shown: string; where: string; status: 402 | 429; body: object; headers: Record<string, string>; outcome: string; judgedBy: Shape; check: string; clause: string }[];
    }),
  )('when the profile puts codes $where and a $status answers $shown, then $check is $outcome', ({ status, body, headers, outcome, judgedBy, check, clause }) => {
    const built = new HandBuilt();
    if (status === 402) built.create('avatar', { type: 'prompt', name: 'Broke', prompt: 'A face' }, 402, body, headers);
    else built.answer({ status: 429, responseJson: body, headers: { ...headers, 'retry-after': '1', 'ratelimit-remaining': '0', 'x-ratelimit-remaining': '0' } });
    const result = built.judge({ shape: judgedBy }).results.find((r) => r.id === check)!;
    expect(result.outcome, result.failure?.message).toBe(outcome);
    if (outcome === 'failed') expect(result.failure!.clause).toBe(clause);
  });
});

describe('what the proxy does to a request', () => {
  it('when a request and its answer pass through, then both arrive as they were sent but for the hop-by-hop headers, and a create changes only its webhook_url', async () => {
    const upstream = await startEchoUpstream();
    const proxy = await startProxy({ upstream: upstream.url, port: 0, shape, validator, publicUrl: 'https://proxy.example.net/' });
    try {
      const answer = await raw(proxy.url, { method: 'GET', path: '/v1/me?x=1', headers: ['Authorization', 'Bearer sk_test_echo0000000000', 'X-Trace', 'abc', 'Connection', 'X-Drop', 'X-Drop', '1', 'Proxy-Authorization', 'Basic eg=='] });
      expect(answer.status).toBe(200);
      expect(answer.body.toString()).toBe('{"id":"acct_1","ok":true}');
      const names = answer.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
      expect(names.filter((n) => n === 'set-cookie')).toHaveLength(2);
      expect(names).toContain('x-custom');
      expect(names).not.toContain('x-hop');
      const got = upstream.seen[0]!;
      expect(got.url).toBe('/v1/me?x=1');
      const sent = Object.fromEntries(got.rawHeaders.flatMap((v, i, a) => (i % 2 === 0 ? [[v.toLowerCase(), a[i + 1]!]] : [])));
      expect(sent).toMatchObject({ authorization: 'Bearer sk_test_echo0000000000', 'x-trace': 'abc', host: new URL(upstream.url).host });
      expect(sent['x-drop']).toBeUndefined();
      expect(sent['proxy-authorization']).toBeUndefined();

      const create = Buffer.from('{"type":"prompt" ,"name":"É",\n "webhook_url":"http://127.0.0.1:9/h"}');
      await raw(proxy.url, { method: 'POST', path: '/v1/avatars', headers: ['Authorization', 'Bearer sk_test_echo0000000000', 'Content-Type', 'application/json', 'Content-Length', String(create.length)], body: create });
      const rewritten = upstream.seen[1]!.body.toString();
      expect(rewritten).toMatch(/^\{"type":"prompt" ,"name":"É",\n "webhook_url":"https:\/\/proxy\.example\.net\/__conformance\/webhooks\/[0-9a-f]{24}"\}$/);
      expect(proxy.webhookBase).toBe('https://proxy.example.net/__conformance/webhooks/');

      // 3 MB each way, streamed: neither side is held to the proxy's copy for judging.
      const big = Buffer.alloc(3 << 20, 9);
      const streamed = await raw(proxy.url, { method: 'POST', path: '/v1/big', headers: ['Content-Length', String(big.length)], body: big });
      expect(upstream.seen[2]!.body.equals(big)).toBe(true);
      expect(streamed.body.length).toBe(48 * 65_536);
      expect(streamed.body.subarray(47 * 65_536).every((byte) => byte === 47)).toBe(true);
      // The key is known by its label only.
      expect(proxy.traffic.keys).toEqual(['key 1 (sk_test_…)']);
      expect(JSON.stringify(proxy.traffic.exchanges)).not.toContain('sk_test_echo');
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });

  it('when the service delivers to the address the proxy gave it, with or without the path of --public-url, then the delivery reaches the client\'s receiver byte for byte, and an address it never gave answers 404', async () => {
    const upstream = await startEchoUpstream();
    const receiver = await startRecordingReceiver();
    const proxy = await startProxy({ upstream: upstream.url, port: 0, shape, validator, publicUrl: 'https://tunnel.example.net/proxy' });
    try {
      const create = Buffer.from(JSON.stringify({ type: 'prompt', name: 'Hook', prompt: 'A face', webhook_url: receiver.url }));
      await raw(proxy.url, { method: 'POST', path: '/v1/avatars', headers: ['Authorization', 'Bearer sk_test_echo0000000000', 'Content-Type', 'application/json', 'Content-Length', String(create.length)], body: create });
      const told = (JSON.parse(upstream.seen[0]!.body.toString()) as { webhook_url: string }).webhook_url;
      expect(told).toMatch(/^https:\/\/tunnel\.example\.net\/proxy\/__conformance\/webhooks\/[0-9a-f]{24}$/);
      const id = told.split('/').at(-1)!;
      const body = Buffer.from('{"id":"evt_1", "data":{"object":{"id":"av_1"}}}');
      const headers = ['Content-Type', 'application/json', 'X-Service-Timestamp', '1700000000', 'X-Service-Signature', 'v1=abc', 'Content-Length', String(body.length)];
      const viaTunnelPath = await raw(proxy.url, { method: 'POST', path: `/proxy/__conformance/webhooks/${id}`, headers, body });
      const direct = await raw(proxy.url, { method: 'POST', path: `/__conformance/webhooks/${id}`, headers, body });
      const unknown = await raw(proxy.url, { method: 'POST', path: '/__conformance/webhooks/0123456789abcdef01234567', headers, body });
      expect([viaTunnelPath.status, direct.status, unknown.status]).toEqual([200, 200, 404]);
      expect(receiver.received).toHaveLength(2);
      for (const got of receiver.received) {
        expect(got.rawBody.equals(body)).toBe(true);
        expect(got.headers).toMatchObject({ 'x-service-timestamp': '1700000000', 'x-service-signature': 'v1=abc', host: new URL(receiver.url).host });
      }
      expect(proxy.traffic.deliveries.map((d) => [d.key, d.receiver, d.receiverStatus])).toEqual([
        ['key 1 (sk_test_…)', receiver.url, 200],
        ['key 1 (sk_test_…)', receiver.url, 200],
      ]);
    } finally {
      await proxy.close();
      await receiver.close();
      await upstream.close();
    }
  });

  it('when a share of 429s is injected, then those requests never reach the service and get a closed window of the key\'s own limit', async () => {
    const upstream = await startEchoUpstream();
    const proxy = await startProxy({ upstream: upstream.url, port: 0, shape, validator, inject429: 0.5 });
    try {
      const headers = ['Authorization', 'Bearer sk_test_echo0000000000'];
      const first = await raw(proxy.url, { method: 'GET', path: '/v1/me', headers });
      const second = await raw(proxy.url, { method: 'GET', path: '/v1/me', headers });
      expect(first.status).toBe(200);
      expect(second.status).toBe(429);
      const values = Object.fromEntries(second.rawHeaders.flatMap((v, i, a) => (i % 2 === 0 ? [[v.toLowerCase(), a[i + 1]!]] : [])));
      expect(values).toMatchObject({ 'retry-after': '1', 'ratelimit-limit': '77', 'ratelimit-remaining': '0', 'ratelimit-reset': '1', 'x-ratelimit-limit': '77', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' });
      expect(JSON.parse(second.body.toString())).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
      expect(upstream.seen).toHaveLength(1);
      // A request outside the rate-limited operations is never answered by the proxy.
      await raw(proxy.url, { method: 'GET', path: '/v1/big', headers });
      expect(upstream.seen).toHaveLength(2);
      expect(proxy.traffic.exchanges.map((e) => e.injected)).toEqual([false, true, false]);
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });

  it('when a create names a webhook_url, then only that value changes, byte for byte around it', () => {
    const raw = Buffer.from('{ "type":"prompt",\n  "webhook_url" : "http://127.0.0.1:9/hooks?a=\\"b\\"", "name":"\\u00e9" }');
    const { body, json } = rewriteWebhookUrl(raw, () => 'http://127.0.0.1:1/__conformance/webhooks/abc');
    expect(body.toString()).toBe('{ "type":"prompt",\n  "webhook_url" : "http://127.0.0.1:1/__conformance/webhooks/abc", "name":"\\u00e9" }');
    expect((json as { webhook_url: string }).webhook_url).toBe('http://127.0.0.1:9/hooks?a="b"');
  });

  it('when a create names no webhook_url, then its body goes on as it came', () => {
    const raw = Buffer.from('{"type":"prompt", "name":"x"}');
    expect(rewriteWebhookUrl(raw, () => 'unused').body).toBe(raw);
  });

  it('when a share is injected, then it is spread evenly over each key\'s requests', () => {
    const injector = new Injector(0.25);
    const taken = Array.from({ length: 12 }, () => injector.take('key 1'));
    expect(taken.map((t) => (t ? 1 : 0)).join('')).toBe('000100010001');
    expect(new Injector(0).take('key 1')).toBe(false);
  });
});
