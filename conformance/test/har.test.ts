// The run's traffic as HAR 1.2 (--report-har): held to the spec's required fields by a
// JSON schema of them, each entry naming its check, the webhooks the receiver got as
// entries of their own, and no key or signing secret anywhere in the file.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareDocuments } from '../../contract/compatibility.ts';
import { callsFromHar, formatImpacts } from '../../contract/traffic.ts';
import { judgeTraffic } from '../../scripts/contract-diff.ts';
import { runConformance } from '../src/run.ts';
import { runReceiverConformance, type ReceiverRunOptions } from '../src/receiver-checks/run.ts';
import { RECEIVER_SECRET, startIndependentReceiver } from './fixtures/receivers.ts';
import { Traffic } from '../src/proxy/traffic.ts';
import { type Har, proxyHar, RUN_LABEL, runHar, senderHar, toHar } from '../src/report/har.ts';
import { toJson } from '../src/report/json.ts';
import { toMarkdown } from '../src/report/markdown.ts';
import type { Report } from '../src/report/model.ts';
import { deliveryCommands, shellQuote } from '../src/report/reproduce.ts';
import { signWebhook } from '../../contract/webhookSignature.ts';
import { type Fixture, SECRET, startFixture } from './fixtures/reference.ts';
import { optionsFor } from './helpers.ts';

const nameValue = { type: 'object', required: ['name', 'value'], properties: { name: { type: 'string' }, value: { type: 'string' } } };
const nameValues = { type: 'array', items: nameValue };
/** The members HAR 1.2 requires (softwareishard.com/blog/har-12-spec), with their types. */
export const HAR_1_2_SCHEMA = {
  type: 'object',
  required: ['log'],
  properties: {
    log: {
      type: 'object',
      required: ['version', 'creator', 'entries'],
      properties: {
        version: { const: '1.2' },
        creator: { type: 'object', required: ['name', 'version'], properties: { name: { type: 'string' }, version: { type: 'string' } } },
        entries: {
          type: 'array',
          items: {
            type: 'object',
            required: ['startedDateTime', 'time', 'request', 'response', 'cache', 'timings'],
            properties: {
              startedDateTime: { type: 'string', pattern: '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?(Z|[+-]\\d\\d:\\d\\d)$' },
              time: { type: 'number', minimum: 0 },
              request: {
                type: 'object',
                required: ['method', 'url', 'httpVersion', 'cookies', 'headers', 'queryString', 'headersSize', 'bodySize'],
                properties: {
                  method: { type: 'string' },
                  url: { type: 'string', pattern: '^https?://' },
                  httpVersion: { type: 'string' },
                  cookies: { type: 'array' },
                  headers: nameValues,
                  queryString: nameValues,
                  postData: { type: 'object', required: ['mimeType', 'text'], properties: { mimeType: { type: 'string' }, text: { type: 'string' } } },
                  headersSize: { type: 'integer' },
                  bodySize: { type: 'integer' },
                },
              },
              response: {
                type: 'object',
                required: ['status', 'statusText', 'httpVersion', 'cookies', 'headers', 'content', 'redirectURL', 'headersSize', 'bodySize'],
                properties: {
                  status: { type: 'integer' },
                  statusText: { type: 'string' },
                  httpVersion: { type: 'string' },
                  cookies: { type: 'array' },
                  headers: nameValues,
                  content: { type: 'object', required: ['size', 'mimeType'], properties: { size: { type: 'integer' }, mimeType: { type: 'string' }, text: { type: 'string' } } },
                  redirectURL: { type: 'string' },
                  headersSize: { type: 'integer' },
                  bodySize: { type: 'integer' },
                },
              },
              cache: { type: 'object' },
              timings: {
                type: 'object',
                required: ['send', 'wait', 'receive'],
                properties: { send: { type: 'number', minimum: -1 }, wait: { type: 'number', minimum: -1 }, receive: { type: 'number', minimum: -1 } },
              },
            },
          },
        },
      },
    },
  },
} as const;

export function validateHar(har: unknown): string[] {
  const validate = new Ajv({ allErrors: true, strict: false }).compile(HAR_1_2_SCHEMA);
  return validate(har) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
}

describe('--report-har', () => {
  let fixture: Fixture;
  let report: Report;
  let har: Har;
  let text: string;

  beforeAll(async () => {
    // The 402 answered with another code: a failed check, and webhooks, in one small run.
    fixture = await startFixture({ flaws: { insufficientCode: 'no_credits' } });
    const traffic: Parameters<typeof runConformance>[1] = { baseUrl: '', exchanges: [], deliveries: [], secrets: [] };
    report = await runConformance(optionsFor(fixture, 'core', { only: ['credits.insufficient-credits-402', 'webhooks.event-type-matches-state', 'avatars.name-required', 'avatars.get-returns-record'] }), traffic);
    har = runHar(traffic!);
    text = toHar(har);
  }, 60_000);
  afterAll(() => fixture.close());

  it('when a run ends, then its HAR file has the shape HAR 1.2 requires', () => {
    expect(validateHar(JSON.parse(text))).toEqual([]);
  });

  it('when a run ends, then every exchange is an entry naming the check that made it, the run\'s own and shared requests named "run"', () => {
    const requests = har.log.entries.filter((entry) => !entry._webhook);
    expect(requests).toHaveLength(report.requests);
    const checks = new Set(requests.map((entry) => entry._check));
    expect(checks).toContain(RUN_LABEL);
    expect(checks).toContain('avatars.name-required');
    for (const check of checks) expect([RUN_LABEL, ...report.results.map((result) => result.id)]).toContain(check);
    // Its own creates without a name, each refused.
    expect(requests.filter((entry) => entry._check === 'avatars.name-required' && entry.request.method === 'POST').map((entry) => entry.response.status)).toEqual([422, 422, 422]);
    // The shared 402 attempt, made once for every check that reads it, says what it was.
    expect(requests.find((entry) => entry.response.status === 402)).toMatchObject({ _check: RUN_LABEL, _note: 'valid request without credits' });
    expect(requests.find((entry) => entry.response.status === 402)?.response.content.text).toContain('no_credits');
  });

  it('when the receiver got webhooks, then each is an entry of its own, the service\'s POST and the receiver\'s answer', () => {
    const webhooks = har.log.entries.filter((entry) => entry._webhook);
    expect(webhooks.length).toBeGreaterThan(0);
    expect(webhooks.length).toBe(report.deliveries);
    for (const entry of webhooks) {
      expect(entry.request.method).toBe('POST');
      expect(entry.request.postData?.text).toMatch(/"type"/);
      // The receiver answers as the job's mode says: 200, or 500 to make the service retry.
      expect([200, 500]).toContain(entry.response.status);
    }
  });

  it('when a member of the avatar record is renamed, then contract:diff --traffic of the run\'s HAR names the observed avatar reads it breaks, and the changes that touch nothing observed', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'har-')), 'run.har');
    writeFileSync(file, text);
    const base = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')) as Record<string, unknown>;
    const head = structuredClone(base) as { components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> } };
    const avatar = head.components.schemas.Avatar!;
    avatar.properties.display_name = avatar.properties.name;
    delete avatar.properties.name;
    avatar.required = avatar.required.map((member) => (member === 'name' ? 'display_name' : member));

    const { calls, impacts } = judgeTraffic(file, compareDocuments(base, head as unknown as Record<string, unknown>), Object.keys(base.paths as object));
    expect(calls).toBe(har.log.entries.length);
    const reads = impacts.find((impact) => impact.change.where === 'GET /v1/avatars/{id} 200 response: name');
    const polls = har.log.entries.filter((entry) => entry.request.method === 'GET' && /\/v1\/avatars\/av_/.test(entry.request.url) && entry.response.status === 200).length;
    expect(polls).toBeGreaterThan(0);
    expect(reads?.touched).toEqual([{ method: 'GET', template: '/v1/avatars/{id}', status: 200, member: 'name', count: polls }]);
    // The run listed no avatars: the same rename in the list's items breaks nothing it saw.
    expect(impacts.find((impact) => impact.change.where === 'GET /v1/avatars 200 response: data[].name')).toMatchObject({ touched: [], untouched: 'no GET /v1/avatars call was observed' });
    const printed = formatImpacts(impacts, calls, file);
    expect(printed).toContain(`breaks GET /v1/avatars/{id} 200 (name): seen ${polls} times`);
    expect(printed).toContain('touches nothing observed: no GET /v1/avatars call was observed');
  });

  it('when the traffic file is not HAR, then contract:diff says what it lacks', () => {
    expect(() => callsFromHar({ results: [] }, [])).toThrow(/not HAR: it has no log\.entries array .*--report-har/);
    expect(() => callsFromHar({ log: { entries: [{ request: { method: 'GET', url: 'nope' }, response: { status: 200 } }] } }, [])).toThrow('log.entries[0].request.url is not a URL');
  });

  it('when a check fails, then its failure carries curl commands that show it, in the JSON and Markdown reports, keys from the environment', () => {
    const failed = report.results.filter((result) => result.outcome === 'failed');
    expect(failed.map((result) => result.id)).toContain('credits.insufficient-credits-402');
    for (const result of failed) expect(result.failure?.reproduction?.[0], result.id).toMatch(/^curl -sS -i /);
    const commands = failed.find((result) => result.id === 'credits.insufficient-credits-402')!.failure!.reproduction!;
    const sent = har.log.entries.find((entry) => entry.response.status === 402)!.request.postData!.text;
    expect(commands[0]).toBe(`curl -sS -i -X POST '${fixture.baseUrl}/v1/avatars' -H 'content-type: application/json' -H "authorization: Bearer $CONFORMANCE_EMPTY_KEY" --data-raw '${sent}'`);
    const json = toJson(report);
    const markdown = toMarkdown(report);
    expect(json).toContain('"reproduction": [');
    expect(markdown).toContain('```sh\n' + commands.join('\n') + '\n```');
    for (const secret of [...Object.values(fixture.keys), SECRET]) {
      expect(json).not.toContain(secret);
      expect(markdown).not.toContain(secret);
    }
  });

  it('when a reproduction is run as printed, then it shows the failure again', async () => {
    const command = report.results.find((result) => result.id === 'credits.insufficient-credits-402')!.failure!.reproduction![0]!;
    // Not execFileSync: the fixture answers from this process's event loop.
    const { stdout: out } = await promisify(execFile)('sh', ['-c', command], { env: { PATH: process.env.PATH, CONFORMANCE_EMPTY_KEY: fixture.keys.empty }, encoding: 'utf8' });
    expect(out).toMatch(/^HTTP\/1\.1 402/);
    expect(out).toContain('no_credits');
  });

  it('when a run ends, then no key and no signing secret is in the file', () => {
    for (const secret of [...Object.values(fixture.keys), SECRET]) expect(text).not.toContain(secret);
    expect(text).toContain('sk_test_…(redacted)');
  });
});

describe('--report-har of a proxy run and of a receiver run', () => {
  it('when the proxy saw a client\'s exchange and passed a webhook on, then both are entries, the key by its label only', () => {
    const traffic = new Traffic();
    const token = 'sk_test_proxyclient0123456789';
    const label = traffic.label(token);
    traffic.exchanges.push({ seq: 1, key: label, method: 'GET', path: `/v1/avatars?echo=${token}`, operationId: 'listAvatars', bucket: 'read', requestJson: undefined, arrivedAt: 1_700_000_000_000, answeredAt: 1_700_000_000_012, status: 200, responseHeaders: { 'content-type': 'application/json' }, responseJson: { data: [] }, responseText: '{"data":[]}', injected: false });
    traffic.deliveries.push({ seq: 1, key: label, receiver: 'http://127.0.0.1:9/hooks', createSeq: 1, arrivedAt: 1_700_000_000_020, headers: { 'x-signature': 't=1,v1=ab' }, rawBody: Buffer.from(`{"type":"avatar.ready","secret":"${SECRET}"}`), json: {}, receiverStatus: 204 });
    const har = proxyHar(traffic, 'http://127.0.0.1:3000/', [SECRET]);
    const text = toHar(har);
    expect(validateHar(JSON.parse(text))).toEqual([]);
    expect(har.log.entries.map((entry) => [entry._check, entry.request.method, entry.response.status, entry._webhook ?? false])).toEqual([
      [label, 'GET', 200, false],
      [label, 'POST', 204, true],
    ]);
    expect(text).not.toContain(token);
    expect(text).not.toContain(SECRET);
  });

  it('when the runner sent deliveries to a receiver, then each is an entry naming its check, an unanswered one with status 0', () => {
    const delivery = { label: 'first delivery', body: Buffer.from('{"type":"avatar.ready"}'), headers: [['x-signature', 't=1,v1=ab'], ['content-type', 'application/json']] as [string, string][] };
    const har = senderHar('http://127.0.0.1:4000/webhooks', [
      { delivery, answer: { kind: 'answered', status: 200, ms: 5, body: '' }, check: 'receiver.accepts-valid', at: 1_700_000_000_000 },
      { delivery, answer: { kind: 'no-answer', reason: `no answer within 1 s (${SECRET})`, ms: 1000 }, check: 'receiver.answers-fast', at: 1_700_000_000_100 },
    ], [SECRET], 1_700_000_000_000);
    const text = toHar(har);
    expect(validateHar(JSON.parse(text))).toEqual([]);
    expect(har.log.entries.map((entry) => [entry._check, entry.response.status, entry.request.postData?.mimeType])).toEqual([
      ['receiver.accepts-valid', 200, 'application/json'],
      ['receiver.answers-fast', 0, 'application/json'],
    ]);
    expect(text).not.toContain(SECRET);
  });
});

describe('a reproduction, runnable as printed', () => {
  it('when a word holds single quotes and shell characters, then the shell reads it back as it was', () => {
    const word = `it's $HOME \`id\` "x" \\ ; | & \n end`;
    expect(execFileSync('sh', ['-c', `printf '%s' ${shellQuote(word)}`], { encoding: 'utf8' })).toBe(word);
  });

  it('when a delivery is shown, then its signature command recomputes the signature it carried from $CONFORMANCE_SIGNING_SECRET', () => {
    const rawBody = `{"id":"evt_0123456789","type":"avatar.ready","note":"it's"}`;
    const signature = signWebhook(SECRET, 1_700_000_000, rawBody);
    const delivery = { seq: 1, label: 'prompt-avatar', mode: 'ok' as const, receivedAt: 0, method: 'POST', headers: { 'content-type': 'application/json', 'x-service-timestamp': '1700000000', 'x-service-signature': signature }, rawBody, json: JSON.parse(rawBody), verification: { ok: true as const }, answered: 200, duplicate: false };
    const [resend, check] = deliveryCommands(delivery, [SECRET]);
    expect(resend).toContain('"$RECEIVER_URL"');
    expect(check).not.toContain(SECRET);
    expect(execFileSync('sh', ['-c', check!], { env: { PATH: process.env.PATH, CONFORMANCE_SIGNING_SECRET: SECRET }, encoding: 'utf8' }).trim()).toBe(signature);
  });
});

describe('a receiver run\'s reproductions and HAR file', () => {
  it('when a receiver accepts a delivery whose signature is wrong, then the failure carries the curl that sends it again, and it is accepted again', async () => {
    const receiver = await startIndependentReceiver({ flaw: 'no-signature-check' });
    try {
      const sent: NonNullable<ReceiverRunOptions['sent']> = [];
      const report = await runReceiverConformance({ url: receiver.url, signingSecret: RECEIVER_SECRET, timeoutSeconds: 5, only: ['receiver.signature-verified'], sent });
      const commands = report.results.find((result) => result.id === 'receiver.signature-verified')?.failure?.reproduction ?? [];
      expect(commands.length).toBeGreaterThan(0);
      for (const command of commands) {
        expect(command.startsWith(`curl -sS -i -X POST '${receiver.url}'`)).toBe(true);
        expect(command).not.toContain(RECEIVER_SECRET);
      }
      const { stdout } = await promisify(execFile)('sh', ['-c', commands.at(-1)!], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
      expect(stdout).toMatch(/^HTTP\/1\.1 2\d\d/);
      const har = senderHar(receiver.url, sent, [RECEIVER_SECRET], Date.parse(report.startedAt));
      expect(validateHar(har)).toEqual([]);
      expect(har.log.entries.every((entry) => entry._check === 'receiver.signature-verified')).toBe(true);
      expect(har.log.entries).toHaveLength(report.deliveries);
    } finally {
      await receiver.close();
    }
  });
});
