// The budget of a run: stated before the first request from what each selected check
// declares it may create, at the implementation profile's prices; a run that may spend
// more than --max-credits, or that runs on a live key without it, is refused before it
// sends anything.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeBudget, plannedBudget } from '../src/budget.ts';
import { REFUSAL_TRIES } from '../src/observe/exhaustion.ts';
import { CHECKS } from '../src/checks/index.ts';
import { CONTRACT_PROFILE } from '../src/implementation/profile.ts';
import { Shape } from '../src/implementation/shape.ts';
import { resolveOptions } from '../src/options.ts';
import { runConformance } from '../src/run.ts';
import { selectChecks } from '../src/selection.ts';
import { LIVE_KEYS, startFixture, type Fixture } from './fixtures/reference.ts';
import { optionsFor } from './helpers.ts';

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;
const VALUES = { CONFORMANCE_SECOND_KEY: 'sk_test_second', CONFORMANCE_EMPTY_KEY: 'sk_test_empty', CONFORMANCE_SIGNING_SECRET: 'whsec_unused' };

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: '1', ...VALUES } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

function budgetOf(only: string[], profile: 'core' | 'contract' = 'core') {
  const options = resolveOptions({ baseUrl: 'http://127.0.0.1:1', apiKey: 'sk_test_x', profile, only });
  return plannedBudget(selectChecks(CHECKS, options), options, new Shape(CONTRACT_PROFILE));
}

describe('the budget of a run', () => {
  let counter: Server;
  let url: string;
  let requests = 0;
  beforeAll(async () => {
    counter = createServer((_req, res) => {
      requests++;
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(counter.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => counter.close(resolve));
  });

  it('when --max-credits 10 is less than the selected checks may spend, then the run is refused in one line with exit 2 and no request is sent', async () => {
    const result = await cli(['--base-url', url, '--api-key', 'sk_test_main', '--profile', 'contract', '--max-credits', '10']);
    expect(result.code).toBe(2);
    const refusal = result.stderr.trim().split('\n');
    expect(refusal).toHaveLength(1);
    expect(refusal[0]).toMatch(/^usage: --max-credits 10 is less than the run may spend: at most \d+ credits and \d+ generation requests/);
    expect(requests).toBe(0);
  });

  it('when the production profile is run without --max-credits, then it is refused before any request: its key is live', async () => {
    const result = await cli(['--base-url', url, '--api-key', 'sk_live_main', '--profile', 'production', '--skip', 'receiver']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^usage: the production profile runs on a live key: its jobs are billed, so pass --max-credits <n>/)]);
    expect(requests).toBe(0);
  });

  it('when --max-credits is not a number, then the usage error names the flag', async () => {
    const result = await cli(['--base-url', url, '--api-key', 'sk_test_main', '--max-credits', 'lots']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--max-credits must be an integer from 0 to');
    expect(requests).toBe(0);
  });

  it('when checks are selected with --only, then the budget counts only theirs and the shared jobs they start', () => {
    const all = budgetOf([], 'contract');
    const one = budgetOf(['idempotency.retry-creates-once'], 'contract');
    const none = budgetOf(['versioning.*'], 'contract');
    // The shared jobs (3 avatars and 2 videos, with a failure trigger 1 and 2 more) and the check's own 3 avatars.
    expect(one.creates).toEqual({ avatar: 4 + 3, avatar_video: 4 });
    expect(one.credits).toBe(7 * 10 + 4 * 20);
    expect(all.credits!).toBeGreaterThan(one.credits!);
    expect(none.requests).toBeLessThanOrEqual(one.requests);
    // Outside the contract profile a key may be taken over its limit with accepted creates:
    // counted once for the shared refusal, and once for each try of a check observing under one.
    const shared = budgetOf(['rate-limits.over-limit-429']);
    const both = budgetOf(['rate-limits.over-limit-429', 'rate-limits.per-key']);
    expect(both.creates.avatar - shared.creates.avatar).toBe(REFUSAL_TRIES * 11);
  });

  it('when the budget is stated, then it says every create is counted as charged and which part the rate-limit checks\' refused creates make', () => {
    const jobs = budgetOf(['idempotency.retry-creates-once']);
    expect(describeBudget(jobs)).toBe('at most 150 credits and 11 generation requests that can be charged (7 avatars and 4 videos at 10 and 20), every create counted as charged');
    const limits = budgetOf(['idempotency.retry-creates-once', 'rate-limits.per-key']);
    const windowed = limits.windowCreates.avatar;
    // The shared refusal and the check's own tries, each one over the limit of 10.
    expect(windowed).toBe(11 + REFUSAL_TRIES * 11);
    expect(describeBudget(limits)).toBe(
      `at most ${limits.credits} credits and ${limits.requests} generation requests that can be charged (${limits.creates.avatar} avatars and 4 videos at 10 and 20), every create counted as charged: ${windowed} creates (${windowed * 10} credits) are sent by the rate-limit checks to use a window up, and a service charges them only if it accepts them instead of refusing with 429, so a correct run spends far less`,
    );
  });

  it('when a check sends a create a service could charge, or takes a key over its limit, then it declares what it may create', () => {
    const root = new URL('../src/checks/', import.meta.url).pathname;
    const creating: string[] = [];
    const declaring: string[] = [];
    for (const area of readdirSync(root, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
      for (const file of readdirSync(join(root, area.name))) {
        const source = readFileSync(join(root, area.name, file), 'utf8');
        // Each request it spells out: a POST to a create path with a key that has credits and a body that is not made invalid.
        const sends = [...source.matchAll(/send\(\{([^}]*(?:\{[^}]*\}[^}]*)*)\}\)/g)].map((match) => match[1]!);
        const creates = sends.some((send) => /method: 'POST'/.test(send) && /path: '\/v1\/avatar(s|-videos)'/.test(send) && !/key: 'empty'|key: null|json: without\(/.test(send));
        if (creates || /extraJob\(|refuseNow\(|exhaust\(/.test(source)) creating.push(`${area.name}/${file}`);
        if (/\n  (creates|shares): /.test(source)) declaring.push(`${area.name}/${file}`);
      }
    }
    expect(creating.length).toBeGreaterThan(5);
    expect(declaring).toEqual(creating);
  });

  describe('against a service whose keys are live', () => {
    let live: Fixture;
    beforeAll(async () => {
      live = await startFixture({ config: { mode: 'production' } });
    });
    afterAll(async () => {
      await live.close();
    });

    it('when GET /v1/me says the key is live and no --max-credits was given, then the run stops after reading it, before any create', async () => {
      expect(live.keys.main).toBe(LIVE_KEYS.main);
      const report = await runConformance({ ...optionsFor(live, 'core'), only: ['credits.*'] });
      expect(report.verdict).toBe('aborted');
      expect(report.exitCode).toBe(2);
      expect(report.abort?.message).toMatch(/^GET \/v1\/me says --api-key is a live key: its jobs are billed, so pass --max-credits <n>/);
      // The preflight's reads of /v1/me, one per key, and nothing else.
      expect(report.requests).toBe(3);
    });

    it('when the same run is given --max-credits above its budget, then it goes on and reports what the balances say it spent', async () => {
      const report = await runConformance({ ...optionsFor(live, 'core'), only: ['credits.account-charged'], maxCredits: 1000 });
      expect(report.abort).toBeUndefined();
      expect(report.budget?.maxCredits).toBe(1000);
      expect(report.budget?.spent?.credits).toBeGreaterThan(0);
      expect(report.budget!.spent!.credits).toBeLessThanOrEqual(report.budget!.planned.credits!);
    }, 30_000);
  });
});
