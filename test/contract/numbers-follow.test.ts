// Changing a number of the contract is an edit of its x- member in openapi/ and
// `npm run generate`: in a scratch copy of the repository, one limit, one price and the
// retry schedule and the file links' lifetime are changed there only, and the server's
// rules, the runner's reference profile, defaults and --help, the docs' tables and text and
// the benchmark's price all follow.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseDocument } from 'yaml';
import { CREDIT_COSTS, RATE_LIMIT_BUCKETS, WEBHOOK_DELIVERY } from '../../contract/numbers.ts';
import { workingTreeFiles } from '../support/workingTree.ts';
import { ROOT } from './support/openapi.ts';

const run = promisify(execFile);

const now = { buckets: RATE_LIMIT_BUCKETS, prices: CREDIT_COSTS, delivery: WEBHOOK_DELIVERY };
// New numbers, unlike every current one, so none can pass by coincidence.
const READ_MINUTE = now.buckets.read![0]!.limit + 37;
const AVATAR_PRICE = now.prices.avatar + 7;
const DELAYS = [3, 11, 41];
const JITTER = 0.15;
const LINK_LIFETIME_DAYS = 3;

// What the copy's code says, printed by a probe run inside the copy.
const PROBE = `
import { DEFAULT_PLAN } from './server/src/domain/rateLimits.ts';
import { CREDIT_COST } from './server/src/domain/credits.ts';
import { retryDelayMs, JITTER } from './server/src/domain/webhookSchedule.ts';
import { loadConfig } from './server/src/config.ts';
import { CONTRACT_PROFILE } from './conformance/src/implementation/profile.ts';
import { resolveOptions } from './conformance/src/options.ts';
import { AVATAR_CREDITS } from './scripts/bench/stores.ts';
const config = loadConfig({}, process.cwd(), 256);
const options = resolveOptions({ baseUrl: 'http://127.0.0.1:9', apiKey: 'sk_test_probe' });
const schedule = [];
for (let a = 1; a <= config.webhooks.maxAttempts; a++) schedule.push(retryDelayMs(a, config.webhooks.maxAttempts, config.webhooks.baseDelayMs, () => 0.5));
console.log(JSON.stringify({
  plan: DEFAULT_PLAN, price: CREDIT_COST.avatar, schedule, jitter: JITTER,
  profile: { prices: CONTRACT_PROFILE.prices, retries: CONTRACT_PROFILE.retries },
  expectedRead: options.expectedLimits.read, firstRetry: options.webhookFirstRetrySeconds,
  bench: AVATAR_CREDITS,
}));
process.exit(0);
`;

let copy: string;
let probe: { plan: { read: { minute: number } }; price: number; schedule: (number | null)[]; jitter: number; profile: { prices: { avatar: number }; retries: { delaysSeconds: number[]; jitter: number } }; expectedRead: number[]; firstRetry: number; bench: number };
let help: string;

beforeAll(async () => {
  copy = mkdtempSync(join(tmpdir(), 'numbers-follow-'));
  // The working tree's own files (tracked, and new ones not ignored), read without git.
  for (const file of workingTreeFiles(ROOT)) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(ROOT, file), join(copy, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));

  // The one edit per number: its x- member.
  const root = join(copy, 'openapi', 'openapi.yaml');
  const doc = parseDocument(readFileSync(root, 'utf8'));
  doc.setIn(['info', 'x-rate-limit-buckets', 'read', 0, 'limit'], READ_MINUTE);
  doc.setIn(['info', 'x-webhook-delivery', 'retry_delays_seconds'], doc.createNode(DELAYS, { flow: true }));
  doc.setIn(['info', 'x-webhook-delivery', 'jitter'], JITTER);
  doc.setIn(['info', 'x-file-links', 'lifetime_seconds'], LINK_LIFETIME_DAYS * 86_400);
  writeFileSync(root, doc.toString());
  const avatars = join(copy, 'openapi', 'paths', 'v1_avatars.yaml');
  const before = readFileSync(avatars, 'utf8');
  const after = before.replace(`x-credit-cost: ${now.prices.avatar}\n`, `x-credit-cost: ${AVATAR_PRICE}\n`);
  expect(after).not.toBe(before);
  writeFileSync(avatars, after);

  // generate reads the bundle it makes, never the committed one, which may lack a member
  // just added: here it is emptied.
  writeFileSync(join(copy, 'generated', 'openapi.json'), '{}');
  await run(process.execPath, ['scripts/generate.ts'], { cwd: copy, env: { ...process.env, REDOCLY_TELEMETRY: 'off' } });
  writeFileSync(join(copy, 'probe.ts'), PROBE);
  const [probed, helped] = await Promise.all([
    run(process.execPath, ['probe.ts'], { cwd: copy, env: { ...process.env, LOG_LEVEL: 'silent' } }),
    run(process.execPath, ['conformance/src/cli.ts', '--help'], { cwd: copy }),
  ]);
  probe = JSON.parse(probed.stdout.trim().split('\n').at(-1)!);
  help = helped.stdout;
}, 120_000);

afterAll(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
});

describe('a number changed in its x- member only, then npm run generate', () => {
  test("the server's rules follow: the default plan, the price, the retry schedule and its defaults", () => {
    expect(probe.plan.read.minute).toBe(READ_MINUTE);
    expect(probe.price).toBe(AVATAR_PRICE);
    expect(probe.schedule).toEqual([...DELAYS.map((s) => s * 1000), null]);
    expect(probe.jitter).toBe(JITTER);
  });

  test("the runner follows: its reference profile, its defaults and --help", () => {
    expect(probe.profile.prices.avatar).toBe(AVATAR_PRICE);
    expect(probe.profile.retries).toEqual({ delaysSeconds: DELAYS, jitter: JITTER });
    expect(probe.expectedRead[0]).toBe(READ_MINUTE);
    expect(probe.firstRetry).toBe(DELAYS[0]);
    expect(help).toContain(`accepted read RateLimit-Limit values (default ${READ_MINUTE},`);
    expect(help).toContain(`the contract's ${DELAYS.join(',')})`);
  });

  test("the docs' tables follow, and the benchmark's price", () => {
    const readme = readFileSync(join(copy, 'README.md'), 'utf8');
    expect(readme).toMatch(new RegExp(`\\| prices \\| an avatar <!-- n:price.avatar -->${AVATAR_PRICE}<!-- /n --> credits`));
    expect(readme).toContain(`reads (every \`GET\`) <!-- n:limits.read -->${READ_MINUTE} a minute`);
    expect(readme).toContain(`<!-- n:retries -->${DELAYS.slice(0, -1).map((s) => `${s} s`).join(', ')} and ${DELAYS.at(-1)} s<!-- /n -->`);
    expect(readFileSync(join(copy, 'openapi', 'README.md'), 'utf8')).toContain(`An avatar costs <!-- n:price.avatar -->${AVATAR_PRICE}<!-- /n --> credits`);
    expect(probe.bench).toBe(AVATAR_PRICE);
    expect(readme).toContain(`expire <!-- n:links.lifetime -->${LINK_LIFETIME_DAYS} days<!-- /n --> after the read`);
    expect(readFileSync(join(copy, 'docs', 'getting-started.md'), 'utf8')).toContain(`(<!-- n:links.lifetime.seconds -->${(LINK_LIFETIME_DAYS * 86_400).toLocaleString('en-US')}<!-- /n --> s, the contract's`);
  });

  test('the copy is consistent after generate: check:generated passes there', async () => {
    const { stdout } = await run(process.execPath, ['scripts/generate.ts', '--check'], { cwd: copy, env: { ...process.env, REDOCLY_TELEMETRY: 'off' } });
    expect(stdout).toContain('matches');
  });
});
