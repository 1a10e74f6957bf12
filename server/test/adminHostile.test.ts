// The operator command given hostile values, run as an operator runs it (`npm run admin`)
// on a serving server's store: every number it takes is plain decimal digits within the
// flag's range and nothing else, every name is printable text of a name's length, and each
// refusal is one line naming the flag, the value and what it takes, exit 2, with the store
// as it was. The values are a fixed list of what Number() reads but nobody typed as a
// count, and a sample of random strings drawn with a fixed seed, so a failure repeats.
// Also: credits a store holds past the bound (written before it held, or by hand) are read
// within it and reported, never a 500 on every request, and the other accounts listed.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createAccount } from '../src/domain/accounts.ts';
import { systemClock } from '../src/domain/clock.ts';
import { MAX_CREDITS, periodOf } from '../src/domain/credits.ts';
import { MAX_RATE_LIMIT } from '../src/domain/rateLimits.ts';
import { NAME_MAX_CHARACTERS } from '../src/domain/text.ts';
import { EMBEDDED_FILE, startService, type Service } from '../src/runtime.ts';
import { createTestStoreEnv, scaled, type TestStoreEnv } from './support/stores.ts';

const ADMIN = new URL('../src/admin.ts', import.meta.url).pathname;

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

const logLines: Record<string, any>[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
    done();
  },
});

let storeEnv: TestStoreEnv;
let svc: Service;
beforeAll(async () => {
  storeEnv = await createTestStoreEnv();
  svc = await startService(loadConfig({ PORT: '0', ...storeEnv.env, ENGINE_AVATAR_MS: '0', ENGINE_VIDEO_MS: '0' }), { log: pino({ level: 'warn' }, sink) });
});
afterAll(async () => {
  await svc.stop();
  await storeEnv.drop();
});

/** The command with `args`; `shell` instead runs a shell line, "$0" being node and "$1" the command, for bytes no JS string can hold. */
function admin(args: string[], shell?: string): Promise<Exit> {
  const [file, argv] = shell ? ['/bin/sh', ['-c', shell, process.execPath, ADMIN]] : [process.execPath, [ADMIN, ...args]];
  const child = spawn(file, argv, { env: { ...process.env, LOG_LEVEL: 'warn', ...storeEnv.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Each in turn, at most `width` at a time: every command is a process of its own, and the machine's cores are shared. */
async function inTurn<T, R>(items: readonly T[], width: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await run(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return results;
}

/** What the store holds of its accounts: each account, and its credits this month. */
async function storeState(): Promise<unknown> {
  const period = periodOf(Date.now());
  const accounts = await svc.store.accounts.listAccounts();
  return Promise.all(accounts.map(async (a) => ({ ...a, balance: await svc.store.jobs.creditBalance(a.id, period) })));
}

/** What Number() reads as a count, though nobody typed one; and counts past each flag's range. */
const HOSTILE_NUMBERS = [
  '', ' ', ' 5', '5 ', '+5', '-5', '-0', '0x10', '0b11', '0o7', '1e3', '1E3', '1.0', '1.5', '.5', '5.',
  'NaN', 'Infinity', '-Infinity', '1_000', '5\n', '\t5', '٣', '５', 'abc', '--json',
  '9007199254740991', '9007199254740993', '99999999999999999999999', '1e308', '1000000001', '00000000001000000001',
];
/** Random strings that are not plain digits, from a fixed seed (an argument holds no NUL). */
const RANDOM_NUMBERS = fc.sample(
  fc.string({ unit: 'grapheme', maxLength: 12 }).filter((s) => !/^[0-9]+$/.test(s) && !s.includes('\u0000')),
  { seed: 20261127, numRuns: 8 },
);

const NUMBER_FLAGS = [
  ['--credits', MAX_CREDITS],
  ['--read-per-minute', MAX_RATE_LIMIT],
  ['--read-per-day', MAX_RATE_LIMIT],
  ['--generation-per-minute', MAX_RATE_LIMIT],
  ['--generation-per-day', MAX_RATE_LIMIT],
] as const;

const oneLine = (exit: Exit) => exit.stderr.replace(/\n$/, '').split('\n');

describe('npm run admin given hostile values', () => {
  let account: string;
  let owner: string;
  beforeAll(async () => {
    account = (await createAccount(svc.store, systemClock, { name: 'Target', monthlyCredits: 100 })).account_id;
    owner = (await createAccount(svc.store, systemClock, { name: 'Owner' })).account_id;
  });

  it('refuses every number that is not plain decimal digits within its flag\'s range: one line naming the flag, the value and the range, exit 2, nothing written', async () => {
    // Each process costs half a CPU second, so not every value goes to every flag: the
    // values, shuffled with the seed, are dealt round the commands that take --credits and
    // the rate limits of set-plan, so that every value is tried and each flag gets five.
    const contexts = [
      ...[['create-account'], ['create-workspace', '--owner', owner], ['grant-credits', '--account', account], ['set-credits', '--account', account]].map((command) => ({ command, flag: '--credits', max: MAX_CREDITS })),
      ...NUMBER_FLAGS.slice(1).map(([flag, max]) => ({ command: ['set-plan', '--account', account], flag, max })),
    ];
    const values = fc.sample(fc.shuffledSubarray([...HOSTILE_NUMBERS, ...RANDOM_NUMBERS], { minLength: HOSTILE_NUMBERS.length + RANDOM_NUMBERS.length }), { seed: 20261127, numRuns: 1 })[0]!;
    const cases = values.map((value, i) => {
      const { command, flag, max } = contexts[i % contexts.length]!;
      // Both spellings: `--flag value` and `--flag=value`.
      return { args: Math.floor(i / contexts.length) % 2 ? [...command, flag, value] : [...command, `${flag}=${value}`], flag, max, value };
    });
    const before = await storeState();

    const exits = await inTurn(cases, 4, ({ args }) => admin(args));

    for (const [i, { args, flag, max, value }] of cases.entries()) {
      const exit = exits[i]!;
      const said = `${args.join(' ')} => exit ${exit.code}, stderr ${JSON.stringify(exit.stderr)}, stdout ${JSON.stringify(exit.stdout)}`;
      expect(exit.code, said).toBe(2);
      expect(oneLine(exit), said).toHaveLength(1);
      expect(exit.stderr, said).toContain(`${flag} takes a whole number from 0 to ${max} in plain decimal digits; got "`);
      if (/^[\x21-\x7e]{1,40}$/.test(value)) expect(exit.stderr, said).toContain(JSON.stringify(value));
      expect(exit.stdout, said).toBe('');
    }
    expect(await storeState()).toEqual(before);
  }, 240_000);

  it('refuses a name that is not printable text of 1 to 200 characters: one line, exit 2, nothing written', async () => {
    const hostile = ['', 'bell\u0007', 'red \u001b[31mtext', 'two\nlines', 'tab\there', 'next\u0085line', 'del\u007f', 'para\u2029graph', 'replaced \ufffd', 'lone \ud800 half', 'x'.repeat(NAME_MAX_CHARACTERS + 1), 'y'.repeat(100_000)];
    const cases = hostile.flatMap((name) => [['create-account', '--name', name], ['create-workspace', '--owner', owner, `--name=${name}`]]);
    const before = await storeState();

    const exits = await inTurn(cases, 4, (args) => admin(args));
    // Bytes that are not UTF-8 reach the command as U+FFFD: the name is refused rather than stored garbled.
    const invalidUtf8 = await admin([], `exec "$0" "$1" create-account --name "$(printf 'caf\\351')"`);

    for (const [i, exit] of [...exits, invalidUtf8].entries()) {
      const said = `${JSON.stringify(cases[i] ?? 'invalid UTF-8').slice(0, 200)} => exit ${exit.code}, stderr ${JSON.stringify(exit.stderr).slice(0, 400)}`;
      expect(exit.code, said).toBe(2);
      expect(oneLine(exit), said).toHaveLength(1);
      expect(exit.stderr, said).toMatch(/^admin: --name must be .*; got "/);
      expect(exit.stderr.length, said).toBeLessThan(200);
      expect(exit.stderr, said).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
    }
    expect(await storeState()).toEqual(before);
  }, 120_000);

  it('takes the bounds themselves and any printable name up to 200 characters, exactly', async () => {
    const name = `Zoë 👩‍🚀 ${'z'.repeat(NAME_MAX_CHARACTERS - 8)}`;

    const [created, plan] = await Promise.all([
      admin(['create-account', '--credits', String(MAX_CREDITS), '--name', name, '--json']),
      admin(['set-plan', '--account', account, '--read-per-minute', String(MAX_RATE_LIMIT), '--generation-per-day', '0', '--json']),
    ]);
    const { account_id: id, api_key: key } = JSON.parse(created.stdout);
    const me = await (await fetch(`${svc.url}/v1/me`, { headers: { Authorization: `Bearer ${key}` } })).json() as Record<string, any>;

    expect(created.code, created.stderr).toBe(0);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout).plan).toMatchObject({ read: { minute: MAX_RATE_LIMIT }, generation: { day: 0 } });
    expect(me).toMatchObject({ account_id: id, name, credits: { quota: MAX_CREDITS, available: MAX_CREDITS } });
  });

  it('refuses a grant or monthly credits that would take a month past the bound, before anything is stored, and takes one that reaches it', async () => {
    const { account_id: id, api_key: key } = await createAccount(svc.store, systemClock, { monthlyCredits: MAX_CREDITS - 5 });
    const period = periodOf(Date.now());

    const tooMuch = await admin(['grant-credits', '--account', id, '--credits', '6']);
    const afterRefusal = await svc.store.jobs.creditBalance(id, period);
    const enough = await admin(['grant-credits', '--account', id, '--credits', '5', '--json']);
    const monthly = await admin(['set-credits', '--account', id, '--credits', String(MAX_CREDITS)]);
    const me = await (await fetch(`${svc.url}/v1/me`, { headers: { Authorization: `Bearer ${key}` } })).json() as Record<string, any>;

    expect(tooMuch.code).toBe(2);
    expect(oneLine(tooMuch)).toEqual([
      `admin: --credits takes at most what keeps a month within ${MAX_CREDITS} credits; got 6, with which account ${id} would hold ${MAX_CREDITS - 5} a month + 0 granted + 6 = ${MAX_CREDITS + 1} in ${period}; nothing was changed`,
    ]);
    expect(afterRefusal).toMatchObject({ quota: MAX_CREDITS - 5, available: MAX_CREDITS - 5 });
    expect(enough.code, enough.stderr).toBe(0);
    expect(JSON.parse(enough.stdout).credits).toMatchObject({ quota: MAX_CREDITS, available: MAX_CREDITS });
    expect(monthly.code).toBe(2);
    expect(oneLine(monthly)[0]).toContain(`would hold ${MAX_CREDITS} a month + 5 granted = ${MAX_CREDITS + 5} in ${period}; nothing was changed`);
    expect(me.credits).toMatchObject({ quota: MAX_CREDITS, available: MAX_CREDITS });
  });
});

/**
 * Writes credits past the bound into the store by hand, as a store written before the
 * bound held may hold them: SQLite keeps integers to 2^63, PostgreSQL's columns to 2^31 - 1
 * each (their sum past it).
 */
async function holdCreditsPastTheBound(accountId: string, period: string): Promise<string> {
  if (!scaled) {
    const db = new DatabaseSync(join(storeEnv.env.DATA_DIR!, EMBEDDED_FILE));
    try {
      db.prepare('UPDATE accounts SET monthly_credits = ? WHERE id = ?').run(Number.MAX_SAFE_INTEGER, accountId);
      db.prepare('INSERT INTO credit_ledger (account_id, period, granted) VALUES (?, ?, 10)').run(accountId, period);
    } finally {
      db.close();
    }
    return String(BigInt(Number.MAX_SAFE_INTEGER) + 10n);
  }
  const client = new pg.Client({ connectionString: storeEnv.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query('UPDATE accounts SET monthly_credits = 2147483647 WHERE id = $1', [accountId]);
    await client.query('INSERT INTO credit_ledger (account_id, period, granted) VALUES ($1, $2, 2147483647)', [accountId, period]);
  } finally {
    await client.end();
  }
  return String(2n * 2147483647n);
}

describe('credits a store holds past the bound', () => {
  it('are read as the bound and reported once in the log, never a 500; list-accounts names the account and lists the others', async () => {
    const period = periodOf(Date.now());
    const other = await createAccount(svc.store, systemClock, { name: 'Other', monthlyCredits: 7 });
    const broken = await createAccount(svc.store, systemClock, { name: 'Broken' });
    const held = await holdCreditsPastTheBound(broken.account_id, period);
    const get = (path: string) => fetch(`${svc.url}${path}`, { headers: { Authorization: `Bearer ${broken.api_key}` } });

    const [first, second] = [await get('/v1/me'), await get('/v1/me')];
    const created = await fetch(`${svc.url}/v1/avatars`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${broken.api_key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'prompt', name: 'Maya', prompt: 'A smiling woman in a bright kitchen' }),
    });
    const listed = await admin(['list-accounts', '--json']);

    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(((await first.json()) as Record<string, any>).credits).toMatchObject({ quota: MAX_CREDITS, available: MAX_CREDITS });
    expect(created.status).toBe(202);
    const reports = logLines.filter((l) => l.accountId === broken.account_id);
    expect(reports).toEqual([expect.objectContaining({ level: 40, period, held, readAs: MAX_CREDITS })]);
    expect(listed.code).toBe(1);
    expect(oneLine(listed)).toEqual([`admin: account ${broken.account_id} holds ${held} credits in ${period}, past the most a month holds (${MAX_CREDITS}); they are read as ${MAX_CREDITS} until brought within it`]);
    const rows = JSON.parse(listed.stdout) as { account_id: string; available: number }[];
    expect(rows.find((r) => r.account_id === other.account_id)).toMatchObject({ available: 7 });
    expect(rows.find((r) => r.account_id === broken.account_id)).toMatchObject({ available: MAX_CREDITS - 10 });
  });
});
