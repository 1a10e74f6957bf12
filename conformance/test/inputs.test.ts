// Generated inputs: the same seed makes the same requests, each request's expectation
// agrees with the contract's own validator, and a run against a flawed server prints
// the seed and the shrunk request.
import { spawn } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContractValidator } from '../src/contract.ts';
import { createRequests, type GeneratorDeps, readRequests } from '../src/inputs/requests.ts';
import { CONTRACT_PROFILE } from '../src/implementation/profile.ts';
import { Shape } from '../src/implementation/shape.ts';
import { SECRET, startFixture } from './fixtures/reference.ts';
import { run } from './helpers.ts';

const CLI = new URL('../src/cli.ts', import.meta.url).pathname;

const deps: GeneratorDeps = {
  validator: ContractValidator.load(),
  shape: new Shape(CONTRACT_PROFILE),
  contract: true,
  webhookUrl: 'http://127.0.0.1:9/hooks/generated',
  photoUrl: 'https://images.example.com/portrait.jpg',
  foreignIds: { avatars: ['av_0123456789abcdef'], videos: ['vid_0123456789abcdef'] },
};

describe('generated requests', () => {
  it('when made twice with one seed, then they are the same requests; another seed makes others', () => {
    const first = fc.sample(createRequests(deps), { numRuns: 50, seed: 42 });
    const again = fc.sample(createRequests(deps), { numRuns: 50, seed: 42 });
    const other = fc.sample(createRequests(deps), { numRuns: 50, seed: 43 });

    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
  });

  it('when a create is expected valid or invalid, then the contract validator agrees, and an invalid one names its member', () => {
    const requests = fc.sample(createRequests(deps), { numRuns: 600, seed: 7 });

    const judged = requests.filter((r) => r.expect === 'valid' || r.expect === 'invalid');
    for (const request of judged) {
      const errors = deps.validator.validateRequest('POST', request.path, JSON.parse(request.body ?? 'null'));
      expect(errors?.length === 0, `${request.expect}: ${request.body}`).toBe(request.expect === 'valid');
    }
    // Every kind of case comes up, and most invalid bodies say which member they broke.
    expect(new Set(requests.map((r) => r.expect))).toEqual(new Set(['valid', 'invalid', 'media-type', 'malformed']));
    const invalid = judged.filter((r) => r.expect === 'invalid');
    expect(invalid.filter((r) => r.member).length / invalid.length).toBeGreaterThan(0.8);
    expect(new Set(invalid.map((r) => r.rule))).toEqual(expect.objectContaining({ size: expect.any(Number) }));
    for (const rule of ['required', 'type', 'enum', 'minimum', 'maximum', 'maxLength', 'additionalProperties', 'const']) {
      expect(invalid.some((r) => r.rule === rule), rule).toBe(true);
    }
  });

  it('when a valid body carries a webhook_url, then it is the runner’s own receiver, never an outside host', () => {
    const requests = fc.sample(createRequests(deps), { numRuns: 600, seed: 11 }).filter((r) => r.expect === 'valid');

    const urls = requests.map((r) => (JSON.parse(r.body ?? '{}') as { webhook_url?: string }).webhook_url).filter((url) => url !== undefined);
    expect(urls.length).toBeGreaterThan(0);
    expect(new Set(urls)).toEqual(new Set([deps.webhookUrl]));
  });

  it('when reads are made, then they ask for IDs of this API’s record routes only', () => {
    const requests = fc.sample(readRequests(deps), { numRuns: 300, seed: 5 });

    for (const request of requests) {
      expect(request.method).toBe('GET');
      expect(deps.validator.match('GET', request.path.split('?')[0]!)?.template, request.path).toMatch(/^\/v1\/(avatars|avatar-videos)\/\{id\}$/);
    }
    expect(requests.some((r) => r.path.endsWith(deps.foreignIds.avatars[0]!))).toBe(true);
  });
});

describe('a generated-input run from the command line', () => {
  it('when the server fails on one combination of members, then it exits 1 printing the shrunk request and the seed to replay it', async () => {
    const broken = await startFixture({ flaws: { crashOnPropsWithWebhook: true } });
    try {
      const { limits } = broken.config;
      const result = await new Promise<{ code: number; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, '--base-url', broken.baseUrl, '--api-key', broken.keys.main, '--second-key', broken.keys.second, '--empty-key', broken.keys.empty, '--signing-secret', SECRET, '--profile', 'contract', '--only', 'generated', '--fuzz', '1000', '--seed', '1', '--expect-generation-limits', `${limits.generation},${limits.day.generation}`, '--expect-read-limits', `${limits.read},${limits.day.read}`, '--expect-windows', `${limits.windowMs / 1000},86400`, '--job-timeout', '10'], { env: { ...process.env, NO_COLOR: '1' } });
        let stdout = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.on('close', (code) => resolve({ code: code ?? -1, stdout }));
      });

      expect(result.code, result.stdout).toBe(1);
      expect(result.stdout).toContain('generated inputs: 1000 requests, seed 1 (--seed 1 replays them)');
      expect(result.stdout).toContain('✗ generated.creates');
      expect(result.stdout).toMatch(/AV-PROPS: a generated request got 500.*shrunk in \d+ steps?.*--seed 1 replays it/);
      expect(result.stdout).toContain('the shrunk request:');
      expect(result.stdout).toMatch(/\{"type":"props",.*"webhook_url":/);
      expect(result.stdout).toContain('Clauses broken: AV-PROPS\n');
    } finally {
      await broken.close();
    }
  }, 90_000);

  it('when the key without credits has no sandbox clock, then only the creates its day has room for are sent, and it says so', async () => {
    const fixture = await startFixture();
    const notes: string[] = [];
    try {
      const report = await run(fixture, 'contract', { only: ['generated'], fuzz: 200, seed: 1, clock: false, onProgress: (event) => event.type === 'note' && notes.push(event.message) });

      expect(report.results.map((r) => `${r.id}: ${r.outcome}`)).toEqual(['generated.creates: passed', 'generated.reads: passed']);
      const cap = notes.find((n) => n.includes('fit in what is left of its day'));
      const sent = Number(/^generated\.creates: (\d+) generated creates/.exec(notes.find((n) => n.startsWith('generated.creates: ') && n.includes('generated creates:')) ?? '')?.[1]);
      expect(cap).toMatch(new RegExp(`: ${sent} of the 150 generated creates`));
      // The fixture's day allows 60 generation requests; the run's jobs took some of them.
      expect(sent).toBeGreaterThan(30);
      expect(sent).toBeLessThan(60);
    } finally {
      await fixture.close();
    }
  }, 120_000);

  it('when --fuzz is not a positive number, then it exits 2 naming the flag', async () => {
    const result = await new Promise<{ code: number; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, '--base-url', 'http://127.0.0.1:9', '--api-key', 'k', '--fuzz', '0'], { env: { ...process.env, NO_COLOR: '1' } });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
    });

    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--fuzz must be a number of requests, at least 1');
  });
});
