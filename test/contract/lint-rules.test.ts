// The custom lint rules of redocly.yaml are the contract's invariants; a rule with a
// typo in its `where` or `subject` silently checks nothing. Each case copies the
// contract, breaks it in exactly the way one rule forbids, and requires `redocly lint`
// to fail naming that rule, and only that rule. The untouched copy must lint clean, so
// the failures come from the mutations.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, test } from 'vitest';
import { ROOT } from './support/openapi.ts';

const REDOCLY = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
const run = promisify(execFile);

interface LintResult {
  exitCode: number;
  errors: number;
  warnings: number;
  ruleIds: string[];
}

interface Mutation {
  rule: string;
  violation: string;
  mutate(dir: string): void;
}

const scratchDirs: string[] = [];

// A fresh copy of openapi/ and redocly.yaml, with `root:` pointing into the copy.
function copyContract(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lint-rules-'));
  scratchDirs.push(dir);
  cpSync(join(ROOT, 'openapi'), join(dir, 'openapi'), { recursive: true });
  const config = readFileSync(join(ROOT, 'redocly.yaml'), 'utf8');
  const rooted = config.replace(/^(\s+root:\s*).+$/m, `$1${join(dir, 'openapi', 'openapi.yaml')}`);
  if (rooted === config) throw new Error('redocly.yaml has no `root:` line to repoint');
  writeFileSync(join(dir, 'redocly.yaml'), rooted);
  return dir;
}

// Replaces text that must occur exactly once, so a mutation can never silently miss.
function edit(dir: string, file: string, from: string, to: string): void {
  const path = join(dir, file);
  const text = readFileSync(path, 'utf8');
  const count = text.split(from).length - 1;
  if (count !== 1) throw new Error(`${file}: expected one occurrence of ${JSON.stringify(from)}, found ${count}`);
  writeFileSync(path, text.replace(from, to));
}

async function lint(dir: string): Promise<LintResult> {
  let exitCode = 0;
  let stdout: string;
  try {
    ({ stdout } = await run(process.execPath, [REDOCLY, 'lint', '--config', join(dir, 'redocly.yaml'), '--format', 'json'], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    exitCode = failed.code;
    stdout = failed.stdout ?? '';
  }
  const report = JSON.parse(stdout) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string }[];
  };
  return {
    exitCode,
    errors: report.totals.errors,
    warnings: report.totals.warnings,
    ruleIds: [...new Set(report.problems.map((p) => p.ruleId))],
  };
}

const ME = 'openapi/paths/v1_me.yaml';

const mutations: Mutation[] = [
  {
    rule: 'rule/operation-documents-429',
    violation: 'GET /v1/me without 429',
    mutate: (dir) => edit(dir, ME, "    '429':\n        $ref: ../components/responses/TooManyRequests.yaml\n", ''),
  },
  {
    rule: 'rule/429-has-rate-limit-headers',
    violation: 'TooManyRequests without Retry-After',
    mutate: (dir) => edit(dir, 'openapi/components/responses/TooManyRequests.yaml', '  Retry-After:\n    $ref: ../headers/Retry-After.yaml\n', ''),
  },
  {
    rule: 'rule/generation-documents-402',
    violation: 'POST /v1/avatar-videos without 402',
    mutate: (dir) => edit(dir, 'openapi/paths/v1_avatar-videos.yaml', "    '402':\n        $ref: ../components/responses/PaymentRequired.yaml\n", ''),
  },
  {
    rule: 'rule/create-states-credit-cost',
    violation: 'POST /v1/avatar-videos without its price',
    mutate: (dir) => edit(dir, 'openapi/paths/v1_avatar-videos.yaml', '  x-credit-cost: 20\n', ''),
  },
  {
    rule: 'rule/info-states-numbers',
    violation: 'info without the webhook delivery',
    mutate: (dir) => edit(dir, 'openapi/openapi.yaml', '  x-webhook-delivery:\n    timeout_seconds: 10\n    retry_delays_seconds: [5, 20, 80, 320, 1280]\n    jitter: 0.2\n', ''),
  },
  {
    rule: 'rule/success-has-rate-limit-headers',
    violation: 'the 200 of GET /v1/me without X-RateLimit-Reset',
    mutate: (dir) => edit(dir, ME, '        X-RateLimit-Reset:\n          $ref: ../components/headers/X-RateLimit-Reset.yaml\n', ''),
  },
  {
    rule: 'rule/structured-rate-limit-fields-with-the-trio',
    violation: 'the 404 NotFound response with the trio but without RateLimit',
    mutate: (dir) => edit(dir, 'openapi/components/responses/NotFound.yaml', '  RateLimit:\n    $ref: ../headers/RateLimit.yaml\n', ''),
  },
  {
    rule: 'rule/retry-after-only-on-429-and-503',
    violation: 'Retry-After on the 404 NotFound response',
    mutate: (dir) => edit(dir, 'openapi/components/responses/NotFound.yaml', 'headers:\n', 'headers:\n  Retry-After:\n    $ref: ../headers/Retry-After.yaml\n'),
  },
  {
    rule: 'rule/path-has-v1-prefix',
    violation: 'a path /me without /v1',
    mutate: (dir) => edit(dir, 'openapi/openapi.yaml', 'paths:\n', 'paths:\n  /me:\n    $ref: paths/v1_me.yaml\n'),
  },
  {
    rule: 'rule/operation-has-clauses',
    violation: 'GET /v1/me without x-clauses',
    mutate: (dir) => edit(dir, ME, '  x-clauses: [AUTH-ACCOUNT, CR-ACCOUNT, CR-RESERVE, CR-READ-FREE, RL-BUCKETS, RL-HEADERS, VER-PREFIX]\n', ''),
  },
  {
    rule: 'rule/clause-ids-shape',
    violation: 'a lower-case clause ID on GET /v1/me',
    mutate: (dir) => edit(dir, ME, 'x-clauses: [AUTH-ACCOUNT,', 'x-clauses: [auth-account,'),
  },
  {
    rule: 'rule/media-type-has-examples',
    violation: 'the 200 body of GET /v1/me without examples',
    mutate: (dir) => edit(dir, ME, '          examples:\n            account:\n              $ref: ../components/examples/Account.yaml\n', ''),
  },
  {
    rule: 'rule/operation-names-bucket',
    violation: 'GET /v1/me without x-rate-limit-bucket',
    mutate: (dir) => edit(dir, ME, '  x-rate-limit-bucket: read\n', ''),
  },
  {
    rule: 'rule/bucket-is-known',
    violation: 'GET /v1/me in an unknown bucket',
    mutate: (dir) => edit(dir, ME, '  x-rate-limit-bucket: read\n', '  x-rate-limit-bucket: reads\n'),
  },
];

// The custom rules redocly.yaml declares (two-space-indented `rule/...:` keys).
const declaredRules = [...readFileSync(join(ROOT, 'redocly.yaml'), 'utf8').matchAll(/^ {2}(rule\/[\w-]+):/gm)].map((m) => m[1]);

describe('custom lint rules of redocly.yaml', () => {
  afterAll(() => {
    for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
  });

  test('every declared rule/ rule has a mutation that breaks it', () => {
    expect(declaredRules.length).toBeGreaterThan(0);
    expect(new Set(mutations.map((m) => m.rule))).toEqual(new Set(declaredRules));
  });

  test('the untouched contract lints with zero errors and zero warnings', async () => {
    const dir = copyContract();

    const result = await lint(dir);

    expect(result).toEqual({ exitCode: 0, errors: 0, warnings: 0, ruleIds: [] });
  });

  test.concurrent.each(mutations)('$rule catches $violation', async ({ rule, mutate }) => {
    const dir = copyContract();
    mutate(dir);

    const result = await lint(dir);

    expect(result.exitCode).not.toBe(0);
    // Only that rule: the mutation is surgical, so no other check takes the credit.
    expect(result.ruleIds).toEqual([rule]);
  });
});
