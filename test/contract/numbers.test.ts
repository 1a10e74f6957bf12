// The contract's numbers (openapi/README.md, "The contract's numbers"): the x- members
// are well formed and complete, the document's own prose and examples agree with them,
// and no number of theirs is written again by hand in the code.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { creditCosts, formatNumber, monthlyCredits, problemCodes, rateLimitBuckets, webhookDelivery } from '../../contract/numbers.ts';
import { rateLimitBuckets as operationBuckets } from '../../contract/operations.ts';
import { BUNDLE, ROOT, type JsonObject } from './support/openapi.ts';

const bundle = JSON.parse(readFileSync(BUNDLE, 'utf8')) as JsonObject;
const buckets = rateLimitBuckets(bundle);
const prices = creditCosts(bundle);
const delivery = webhookDelivery(bundle);
const problems = problemCodes(bundle);
const info = bundle.info as JsonObject;
const components = bundle.components as Record<string, Record<string, JsonObject>>;

/** "120 a minute and 10,000 a day", as the contract's prose writes a bucket's limits. */
const limitsText = (bucket: string) => buckets[bucket]!.map((w) => `${formatNumber(w.limit)} a ${w.name}`).join(' and ');

describe('the x- members of the contract', () => {
  test('every bucket an operation counts against states its windows', () => {
    const named = new Set(operationBuckets(bundle).values());
    expect(named.size).toBeGreaterThan(0);
    for (const bucket of named) expect(Object.keys(buckets), `x-rate-limit-bucket ${bucket} has no windows in info.x-rate-limit-buckets`).toContain(bucket);
  });

  test("windows of the same name have the same length in every bucket, and each bucket's are shortest first", () => {
    const lengths = new Map<string, number>();
    for (const [bucket, windows] of Object.entries(buckets)) {
      expect(windows.map((w) => w.windowSeconds), `${bucket}'s windows`).toEqual([...windows.map((w) => w.windowSeconds)].sort((a, b) => a - b));
      for (const w of windows) {
        expect(lengths.get(w.name) ?? w.windowSeconds, `${bucket}'s ${w.name} window`).toBe(w.windowSeconds);
        lengths.set(w.name, w.windowSeconds);
      }
    }
  });

  test('the retry schedule grows and its jitter leaves every wait positive', () => {
    expect(delivery.retryDelaysSeconds.length).toBeGreaterThan(0);
    for (let i = 1; i < delivery.retryDelaysSeconds.length; i++) expect(delivery.retryDelaysSeconds[i]).toBeGreaterThan(delivery.retryDelaysSeconds[i - 1]!);
    expect(delivery.jitter).toBeGreaterThanOrEqual(0);
    expect(delivery.jitter).toBeLessThan(1);
  });

  test('a malformed member is refused naming it and the rule', () => {
    const broken = structuredClone(bundle);
    ((broken.info as JsonObject)['x-rate-limit-buckets'] as Record<string, JsonObject[]>).read![0]!.limit = 0;
    expect(() => rateLimitBuckets(broken)).toThrow('info.x-rate-limit-buckets.read[0].limit must be a positive integer, not 0');
    const unpriced = structuredClone(bundle);
    delete ((unpriced.paths as Record<string, Record<string, JsonObject>>)['/v1/avatars']!.post!)['x-credit-cost'];
    expect(() => creditCosts(unpriced)).toThrow('x-credit-cost of createAvatar must be a positive integer');
  });
});

describe("the contract's prose agrees with its x- members", () => {
  const description = String(info.description);

  test("info.description's table of limits has each bucket's row with its limits", () => {
    const rows = new Map<string, string[]>();
    for (const line of description.split('\n')) {
      const cells = line.trim().split('|').slice(1, -1).map((c) => c.trim());
      if (cells.length === 4 && cells[0] !== 'bucket' && !cells[0]!.startsWith('---')) rows.set(cells[0]!.split(' ')[0]!, cells.slice(2));
    }
    expect([...rows.keys()].sort()).toEqual(Object.keys(buckets).sort());
    for (const [bucket, windows] of Object.entries(buckets)) expect(rows.get(bucket), `the ${bucket} row of info.description`).toEqual(windows.map((w) => formatNumber(w.limit)));
  });

  test("info.description states each create's price and the webhook delivery", () => {
    expect(description).toContain(`An avatar costs ${formatNumber(prices.avatar)} credits and a video ${formatNumber(prices.avatar_video)} credits`);
    expect(description.replace(/\s+/g, ' ')).toContain(`default sandbox plan has ${formatNumber(monthlyCredits(bundle))} credits a month`);
    const waits = delivery.retryDelaysSeconds.map((s) => `${formatNumber(s)} s`);
    const flat = description.replace(/\s+/g, ' ');
    expect(flat).toContain(`waits at most ${formatNumber(delivery.timeoutSeconds)} seconds`);
    expect(flat).toContain(`${delivery.attempts} attempts in all, waiting about ${waits.slice(0, -1).join(', ')} and ${waits.at(-1)} (each ±${formatNumber(delivery.jitter * 100)} % jitter)`);
  });

  test("the Problem code's description names every code of x-problem-codes, with the status it gives", () => {
    const text = String((components.schemas!.Problem!.properties as Record<string, JsonObject>).code!.description);
    const named = [...text.matchAll(/`([a-z_]+)`(?: \((\d{3}))?/g)];
    expect(new Set(named.map((m) => m[1])), 'the codes Problem.code describes').toEqual(new Set(Object.keys(problems)));
    for (const [, code, status] of named) if (status) expect(Number(status), `the status the description gives ${code}`).toBe(problems[code!]!.status);
  });

  test("the RateLimit-Limit headers' descriptions and examples are their bucket's limits", () => {
    const headers = Object.entries(components.headers!).filter(([name]) => /RateLimit-Limit$/.test(name));
    expect(headers.length).toBeGreaterThan(0);
    for (const [name, header] of headers) {
      const bucket = name.startsWith('Generation') ? 'generation' : name.startsWith('Sandbox') ? 'sandbox' : 'read';
      expect(buckets[bucket]!.map((w) => w.limit), `${name}'s example`).toContain(header.example);
      const stated = String(header.description).match(/\d[\d,]* a minute and [\d,]+ a day/);
      if (stated) expect(stated[0], `${name}'s description`).toBe(limitsText(bucket));
    }
  });

  test("every example shows the contract's prices and limits", () => {
    const seen = { records: 0, refusals: 0, limits: 0 };
    const walk = (value: unknown, where: string): void => {
      if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${where}/${i}`));
      if (typeof value !== 'object' || value === null) return;
      const v = value as JsonObject;
      if ((v.object === 'avatar' || v.object === 'avatar_video') && typeof v.credits === 'number') {
        seen.records++;
        expect(v.credits, `${where}: the ${v.object}'s credits`).toBe(prices[v.object]);
      }
      if (typeof v.credits_required === 'number') {
        seen.refusals++;
        expect(Object.values(prices), `${where}: credits_required`).toContain(v.credits_required);
        const said = String(v.detail ?? '').match(/costs (\d[\d,]*) credits/);
        if (said) expect(said[1], `${where}: the detail's price`).toBe(formatNumber(v.credits_required));
      }
      if (typeof v.rate_limits === 'object' && v.rate_limits !== null) {
        for (const [bucket, windows] of Object.entries(v.rate_limits as Record<string, Record<string, JsonObject>>)) {
          for (const [window, state] of Object.entries(windows)) {
            seen.limits++;
            expect(state.limit, `${where}: rate_limits.${bucket}.${window}.limit`).toBe(buckets[bucket]?.find((w) => w.name === window)?.limit);
          }
        }
      }
      for (const [key, child] of Object.entries(v)) walk(child, `${where}/${key}`);
    };
    walk(components.examples, '#/components/examples');
    walk(bundle.paths, '#/paths');
    // The walk found what it judges, so a renamed member cannot leave it judging nothing.
    expect(seen.records).toBeGreaterThan(0);
    expect(seen.refusals).toBeGreaterThan(0);
    expect(seen.limits).toBeGreaterThan(0);
  });
});

// A number of the contract written again by hand: the forms a copy takes (a limit per
// window, a bucket's pair of limits, a price in credits, a run of the retry schedule, a
// jitter, a webhook timeout, a table of problem statuses and titles).
const literal = (n: number) => String(n).replace(/(\d)(?=(\d{3})+$)/g, '$1[_,]?').replace('.', '\\.');
const percent = Math.round(delivery.jitter * 1000) / 10;
const number = (n: number) => `(?<![\\w.$])${literal(n)}(?![\\w.])`;
const any = (ns: readonly number[]) => `(?:${[...new Set(ns)].map(number).join('|')})`;
const limits = Object.values(buckets).flat().map((w) => w.limit);
const shortest = Object.values(buckets).map((ws) => ws[0]!.limit);
const delays = delivery.retryDelaysSeconds;
const COPIES: { what: string; pattern: RegExp }[] = [
  { what: 'a limit per window', pattern: new RegExp(`${any(limits)}\\s*(?:/|a |per |requests? (?:a|per) )(?:minute|day)\\b`, 'i') },
  { what: 'a limit named by its window or bucket', pattern: new RegExp(`\\b(?:minute|day|limit|generation|read|sandbox)['"]?\\s*[:=]\\s*${any(limits)}`, 'i') },
  { what: "a bucket's limits", pattern: new RegExp(Object.values(buckets).map((ws) => ws.map((w) => number(w.limit)).join(String.raw`\s*[,/]\s*`)).join('|')) },
  { what: 'two buckets\' limits', pattern: new RegExp(`${any(shortest)}\\s+(?:and|or)\\s+${any(shortest)}`) },
  { what: 'a limit as a fallback', pattern: new RegExp(`[lL]imits?\\b.*\\?\\?\\s*${any(limits)}`) },
  { what: 'a price', pattern: new RegExp(`${any(Object.values(prices))}\\s*credits?\\b|\\b(?:costs?|price|avatar|avatar_video|video)['"]?\\s*[:=]?\\s*${any(Object.values(prices))}(?!\\s*(?:s\\b|ms\\b|%))`, 'i') },
  { what: 'the retry schedule', pattern: new RegExp(delays.slice(1).map((d, i) => `${number(delays[i]!)}(?:\\s*s)?\\s*,\\s*${number(d)}`).join('|')) },
  { what: 'the jitter', pattern: new RegExp(`jitter.*${number(delivery.jitter)}|±\\s*${number(percent)}\\s*%|${number(1 - delivery.jitter)}\\b.*${number(1 + delivery.jitter)}|retry\\w*\\s*\\*\\s*${number(1 + delivery.jitter)}`, 'i') },
  { what: 'the webhook timeout', pattern: new RegExp(`webhook\\w*.*timeout\\w*.*${any([delivery.timeoutSeconds * 1000])}|timeout\\w*.*webhook.*${any([delivery.timeoutSeconds * 1000])}|(?:webhook|delivery)\\w*timeout\\w*['"]?\\s*[:=]\\s*${any([delivery.timeoutSeconds, delivery.timeoutSeconds * 1000])}`, 'i') },
  { what: 'a problem table', pattern: /status:\s*\d{3},\s*title:/ },
  { what: "the default plan's credits", pattern: new RegExp(`(?:monthly|quota).*${number(monthlyCredits(bundle))}|${number(monthlyCredits(bundle))}\\s*credits a month`, 'i') },
];

/**
 * Lines allowed to carry a copy, each with why (none today: every copy the scan found
 * was made to read contract/numbers.ts). An entry that no longer matches fails the
 * scan, so the list never outlives the line it names.
 */
const ALLOWED: { file: string; line: string; why: string }[] = [];

const SCANNED = ['server/src', 'conformance/src', 'client/src', 'scripts'];

function* codeFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    // Tests state the numbers they expect on purpose; fixtures are other implementations.
    if (entry === 'node_modules' || entry === 'test' || entry === 'fixtures') continue;
    if (statSync(path).isDirectory()) yield* codeFiles(path);
    else if (/\.(?:ts|js|mjs)$/.test(entry)) yield path;
  }
}

describe('no number of the contract is written by hand in the code', () => {
  test(`${SCANNED.join(', ')} take every limit, price, retry and problem code from contract/numbers.ts`, () => {
    const found: string[] = [];
    const used = new Set<(typeof ALLOWED)[number]>();
    for (const top of SCANNED) {
      for (const file of codeFiles(join(ROOT, top))) {
        const name = relative(ROOT, file);
        readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
          for (const copy of COPIES) {
            if (!copy.pattern.test(line)) continue;
            const allowed = ALLOWED.find((a) => a.file === name && line.includes(a.line));
            if (allowed) used.add(allowed);
            else found.push(`${name}:${i + 1}: ${copy.what}: ${line.trim()}`);
          }
        });
      }
    }
    expect(found, 'read these from contract/numbers.ts (or allow them in ALLOWED with why)').toEqual([]);
    expect(ALLOWED.filter((a) => !used.has(a)).map((a) => `${a.file}: ${a.line}`), 'allowed lines that no longer carry a copy').toEqual([]);
  });

  test('the scan finds a copy in each of its forms', () => {
    const [minute, day] = buckets.read!;
    const samples = [
      `const plan = { minute: ${minute!.limit} };`,
      `// ${formatNumber(day!.limit)} a day`,
      `[${minute!.limit}, ${day!.limit}]`,
      `const cost = { avatar: ${prices.avatar} };`,
      `delaysSeconds: [${delays.join(', ')}]`,
      `jitter: ${delivery.jitter}`,
      `expected: 'about 5 s (±${percent} %)'`,
      `export const DEFAULT_DELIVERY_TIMEOUT_SECONDS = ${delivery.timeoutSeconds};`,
      `waitFor(job, 2, options.webhookFirstRetrySeconds * ${1 + delivery.jitter} + 1)`,
      `  not_found: { status: 404, title: 'Not found' },`,
      `export const DEFAULT_MONTHLY_CREDITS = ${monthlyCredits(bundle)};`,
    ];
    for (const sample of samples) expect(COPIES.some((c) => c.pattern.test(sample)), sample).toBe(true);
  });
});

describe("the problem codes the server answers are the contract's", () => {
  test('every code the server raises (a DomainError, an HttpProblem, a connection-level answer) has its row in x-problem-codes', () => {
    const raised = new Set<string>();
    for (const top of ['server/src/domain', 'server/src/http']) {
      for (const file of codeFiles(join(ROOT, top))) {
        const text = readFileSync(file, 'utf8');
        for (const m of text.matchAll(/new (?:DomainError|HttpProblem)\(\s*'([a-z_]+)'/g)) raised.add(m[1]!);
        if (top.endsWith('http')) for (const m of text.matchAll(/\bcode: '([a-z_]+)'/g)) raised.add(m[1]!);
      }
    }
    // The scan reads the forms the server uses; it found the codes of both layers.
    expect(raised).toContain('insufficient_credits');
    expect(raised).toContain('request_timeout');
    expect([...raised].filter((code) => !(code in problems)), 'codes without a row in Problem.yaml x-problem-codes').toEqual([]);
  });
});
