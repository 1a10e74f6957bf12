// What an operator meets when a start or a command cannot go on: one line that says why
// and what to do, never a stack; and one server per embedded store, with the operator
// command still working beside it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomSuffix } from '../src/domain/ids.ts';
import { startServerProcess, type ServerProcess } from './support/serverProcess.ts';
import { createTestStoreEnv, scaled, TEST_DATABASE_URL, TEST_REDIS_URL, type TestStoreEnv } from './support/stores.ts';

const MAIN = new URL('../src/main.ts', import.meta.url).pathname;
const ADMIN = new URL('../src/admin.ts', import.meta.url).pathname;
const MIGRATE = new URL('../src/migrate.ts', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a script of the server to its end (the server's start refused, or a command). */
function run(script: string, args: string[], env: Record<string, string>): Promise<Exit> {
  const child = spawn(process.execPath, [script, ...args], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

const NO_STACK = /^\s+at /m;

let storeEnv: TestStoreEnv;
let server: ServerProcess;
beforeAll(async () => {
  storeEnv = await createTestStoreEnv();
  server = await startServerProcess({ ...storeEnv.env, LOG_LEVEL: 'warn' });
});
afterAll(async () => {
  await server?.stop();
  await storeEnv?.drop();
});

describe('a start that cannot go on', () => {
  it('refuses production without PUBLIC_BASE_URL in one line naming the variable, exit 2, before opening anything', async () => {
    const exit = await run(MAIN, [], { SERVICE_MODE: 'production', PUBLIC_BASE_URL: '', PORT: '0', DATA_DIR: '/nonexistent/never-made' });

    expect(exit.code).toBe(2);
    expect(exit.stderr.trim().split('\n')).toHaveLength(1);
    expect(exit.stderr).toMatch(/^Invalid configuration: SERVICE_MODE=production needs PUBLIC_BASE_URL /);
    expect(existsSync('/nonexistent/never-made')).toBe(false);
  });

  it('warns in one line of a sandbox about to listen beyond loopback, before anything else it says', async () => {
    // The port is taken on 127.0.0.1, so the listen on every interface fails: the test
    // never opens a port beyond loopback, and the warning must come before the listen.
    const other = await createTestStoreEnv();

    const exit = await run(MAIN, [], { ...other.env, HOST: '0.0.0.0', PORT: String(server.port), SERVICE_MODE: '' });
    await other.drop();

    const lines = exit.stderr.trim().split('\n');
    expect(exit.code).toBe(1);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^warning: sandbox mode \(SERVICE_MODE is not production\) listening beyond loopback on 0\.0\.0\.0: .*SERVICE_MODE=production.*HOST=127\.0\.0\.1/);
    expect(lines[1]).toMatch(/^Cannot start: 0\.0\.0\.0:\d+ is already in use/);
  });

  it('says in one line that the port is in use, and exits 1', async () => {
    const other = await createTestStoreEnv();

    const exit = await run(MAIN, [], { ...other.env, PORT: String(server.port) });
    await other.drop();

    expect(exit.code).toBe(1);
    expect(exit.stderr.trim()).toBe(`Cannot start: 127.0.0.1:${server.port} is already in use by another process. Stop it, or set PORT to a free port (PORT=0 picks one).`);
  });

  // The lock is the embedded store's own: on PostgreSQL several servers share one store by design.
  if (!scaled) {
    it('refuses a second server on the same embedded store, saying why and what to do', async () => {
      const exit = await run(MAIN, [], { ...storeEnv.env, PORT: '0' });
      const stillServing = await fetch(`${server.url}/healthz`);

      expect(exit.code).toBe(1);
      expect(exit.stderr).toMatch(/^Cannot start: another server is already running on the embedded store in .+ Stop it, or give this one another DATA_DIR/);
      expect(exit.stderr.trim().split('\n')).toHaveLength(1);
      expect(exit.stdout).not.toContain('listening');
      expect(stillServing.status).toBe(200);
    });
  }

  if (scaled) {
    // A schema nobody created: PostgreSQL alone would say "no schema has been selected to create in".
    const missing = `t_missing_${randomSuffix(8)}`;
    const url = new URL(TEST_DATABASE_URL);
    url.searchParams.set('options', `-c search_path=${missing}`);
    const env = { DATABASE_URL: url.toString(), REDIS_URL: TEST_REDIS_URL };
    const advice = `the schema ${missing} (search_path in DATABASE_URL) does not exist in this database: create it first (CREATE SCHEMA ${missing})`;

    it('names a search_path schema that does not exist and how to create it, in one line, exit 1', async () => {
      const exit = await run(MAIN, [], { ...env, PORT: '0' });

      expect(exit.code).toBe(1);
      expect(exit.stderr.trim()).toBe(`Cannot start: ${advice}`);
      expect(exit.stdout).not.toContain('listening');
    });

    it('makes `npm run migrate` say the same of that schema, in one line, exit 1', async () => {
      const exit = await run(MIGRATE, [], env);

      expect(exit.code).toBe(1);
      expect(exit.stderr.trim()).toBe(`migrate: ${advice}`);
    });

    it('makes the operator command say the same of that schema, in one line, exit 1', async () => {
      const exit = await run(ADMIN, ['list-accounts'], env);

      expect(exit.code).toBe(1);
      expect(exit.stderr.trim()).toBe(`admin: ${advice}`);
    });
  }
});

describe('what a start prints', () => {
  it('says where it listens once, however verbose the log', async () => {
    const other = await createTestStoreEnv();
    const verbose = await startServerProcess({ ...other.env, LOG_LEVEL: 'info' });
    await verbose.stop();
    await other.drop();

    expect(verbose.logs.filter((line) => line.includes('listening'))).toEqual([`avatar service listening on ${verbose.url}`]);
  });

  // DATA_DIR holds the embedded store and its signing secrets; on PostgreSQL it holds nothing of them.
  if (!scaled) {
    it('creates DATA_DIR for its owner alone (0700), and the store, its -wal and -shm files readable by the owner alone (0600)', async () => {
      const parent = mkdtempSync(join(tmpdir(), 'modes-'));
      const dataDir = join(parent, 'data');
      const fresh = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
      const mode = (name: string) => statSync(join(dataDir, name)).mode & 0o777;
      const modes = { dir: mode('.'), db: mode('avatar-service.db'), wal: mode('avatar-service.db-wal'), shm: mode('avatar-service.db-shm') };
      await fresh.stop();
      rmSync(parent, { recursive: true, force: true });

      expect(modes).toEqual({ dir: 0o700, db: 0o600, wal: 0o600, shm: 0o600 });
    });
  }
});

describe('a server on the port the system gives (PORT=0)', () => {
  it('names that port in the links of its records, not port 0', async () => {
    const created = JSON.parse((await run(ADMIN, ['create-account', '--json'], storeEnv.env)).stdout);

    const reply = await fetch(`${server.url}/v1/avatars`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${created.api_key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ type: 'prompt', name: 'Port', prompt: 'A portrait' }),
    });
    const id = ((await reply.json()) as { id: string }).id;
    let record: { status: string; preview_image_url: string | null } = { status: 'queued', preview_image_url: null };
    for (let i = 0; i < 200 && record.status !== 'ready'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      record = (await (await fetch(`${server.url}/v1/avatars/${id}`, { headers: { Authorization: `Bearer ${created.api_key}` } })).json()) as typeof record;
    }

    expect(record.preview_image_url?.split('?')[0]).toBe(`http://localhost:${server.port}/files/${id}/preview.png`);
    expect(server.logs.join('\n')).toContain(`public=http://localhost:${server.port}`);
  });
});

describe('the first account on an empty store', () => {
  it('in production, goes to a file only this user reads, never to stdout', async () => {
    const other = await createTestStoreEnv();
    const dataDir = mkdtempSync(join(tmpdir(), 'first-account-'));
    const production = await startServerProcess({ ...other.env, DATA_DIR: dataDir, SERVICE_MODE: 'production', PUBLIC_BASE_URL: 'https://avatars.example.com', LOG_LEVEL: 'info' });
    await production.waitForLine(/^Created a sandbox account/);
    await production.stop();
    const file = join(dataDir, 'first-account.txt');
    const saved = readFileSync(file, 'utf8');
    const mode = statSync(file).mode & 0o777;
    rmSync(dataDir, { recursive: true, force: true });
    await other.drop();

    const key = /api_key: +(\S+)/.exec(saved)?.[1];
    expect(key).toMatch(/^sk_test_/);
    expect(saved).toMatch(/signing_secret: +whsec_/);
    expect(mode).toBe(0o600);
    expect(production.logs.join('\n')).not.toContain(key!);
    expect(production.logs.join('\n')).toContain(file);
  });
});

describe('a restart on a store that has accounts', () => {
  it('names the command that makes a new key, and that command works as printed', async () => {
    const other = await createTestStoreEnv();
    const first = await startServerProcess({ ...other.env, LOG_LEVEL: 'warn' });
    await first.waitForLine(/^Created a sandbox account/);
    await first.stop();
    const restarted = await startServerProcess({ ...other.env, LOG_LEVEL: 'warn' });
    try {
      const hint = await restarted.waitForLine(/^This store has 1 account/);
      const command = /A new key: ((?:DATA_DIR=\S+ )?npm run admin -- issue-key --account acct_\S+)/.exec(hint)?.[1];
      expect(command, hint).toBeDefined();
      // Run as a user would paste it: the embedded store comes from the command itself, not from this test's environment.
      const env: NodeJS.ProcessEnv = { ...process.env, ...other.env };
      delete env.DATA_DIR;
      const pasted = spawn('sh', ['-c', `${command} --json`], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      pasted.stdout.on('data', (c) => (stdout += c));
      pasted.stderr.on('data', (c) => (stderr += c));
      const code = await new Promise((resolve) => pasted.once('close', resolve));
      const issued = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { api_key?: string };
      const me = await fetch(`${restarted.url}/v1/me`, { headers: { Authorization: `Bearer ${issued.api_key}` } });

      expect(first.logs.join('\n')).not.toContain('This store has');
      expect(hint).toContain(scaled ? '(with the same DATABASE_URL and REDIS_URL)' : `DATA_DIR=${other.env.DATA_DIR}`);
      expect(code, stderr).toBe(0);
      expect(me.status).toBe(200);
    } finally {
      await restarted.stop();
      await other.drop();
    }
  }, 60_000);
});

describe('the operator command beside a running server', () => {
  it('creates an account the server then serves', async () => {
    const exit = await run(ADMIN, ['create-account', '--name', 'Beside', '--json'], storeEnv.env);
    const created = JSON.parse(exit.stdout);
    const me = await fetch(`${server.url}/v1/me`, { headers: { Authorization: `Bearer ${created.api_key}` } });

    expect(exit.code).toBe(0);
    expect(me.status).toBe(200);
  });

  it('turns Standard Webhooks on and off for an account, which GET /v1/me then shows, and refuses neither or both flags', async () => {
    const created = JSON.parse((await run(ADMIN, ['create-account', '--json'], storeEnv.env)).stdout);
    const me = async () => ((await (await fetch(`${server.url}/v1/me`, { headers: { Authorization: `Bearer ${created.api_key}` } })).json()) as { standard_webhooks: boolean }).standard_webhooks;
    const before = await me();

    const on = await run(ADMIN, ['set-standard-webhooks', '--account', created.account_id, '--on', '--json'], storeEnv.env);
    const afterOn = await me();
    const listed = JSON.parse((await run(ADMIN, ['list-accounts', '--json'], storeEnv.env)).stdout) as { account_id: string; standard_webhooks: boolean }[];
    const off = await run(ADMIN, ['set-standard-webhooks', '--account', created.account_id, '--off'], storeEnv.env);
    const afterOff = await me();
    const both = await run(ADMIN, ['set-standard-webhooks', '--account', created.account_id, '--on', '--off'], storeEnv.env);

    expect(before).toBe(false);
    expect(on.code).toBe(0);
    // The secret as receivers paste it: a new account's verifies both header sets as printed.
    expect(JSON.parse(on.stdout)).toEqual({ account_id: created.account_id, standard_webhooks: true, signing_secret: created.signing_secret, note: expect.stringContaining('as printed, verifies both') });
    expect(afterOn).toBe(true);
    expect(listed.find((a) => a.account_id === created.account_id)?.standard_webhooks).toBe(true);
    expect(off.code).toBe(0);
    expect(afterOff).toBe(false);
    expect(both.code).toBe(2);
    expect(both.stderr.split('\n')[0]).toBe('admin: give exactly one of --on and --off');
  });

  it('refuses a live key for an account whose sandbox clock moved in one line, exit 2', async () => {
    const created = JSON.parse((await run(ADMIN, ['create-account', '--json'], storeEnv.env)).stdout);
    const key = created.api_key as string;
    const moved = await fetch(`${server.url}/v1/test_helpers/clock/advance`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: '{"seconds":60}' });

    const exit = await run(ADMIN, ['issue-key', '--account', created.account_id, '--mode', 'live'], storeEnv.env);

    expect(moved.status).toBe(200);
    expect(exit.code).toBe(2);
    expect(exit.stderr.split('\n')[0]).toBe(`admin: account ${created.account_id} has moved its sandbox clock; it cannot have a live key`);
    expect(exit.stderr).not.toMatch(NO_STACK);
  });

  it('grants credits into the month of the account time, which its sandbox clock moved on, not the service\'s', async () => {
    const created = JSON.parse((await run(ADMIN, ['create-account', '--credits', '30', '--json'], storeEnv.env)).stdout);
    const auth = { Authorization: `Bearer ${created.api_key}`, 'Content-Type': 'application/json' };
    const moved = await fetch(`${server.url}/v1/test_helpers/clock/advance`, { method: 'POST', headers: auth, body: JSON.stringify({ seconds: 40 * 86_400 }) });
    const accountMonth = ((await moved.json()) as { now: string }).now.slice(0, 7);

    const exit = await run(ADMIN, ['grant-credits', '--account', created.account_id, '--credits', '100', '--json'], storeEnv.env);
    const me = (await (await fetch(`${server.url}/v1/me`, { headers: auth })).json()) as { credits: { period_start: string; quota: number } };

    expect(exit.code).toBe(0);
    expect(JSON.parse(exit.stdout).period).toBe(accountMonth);
    expect(accountMonth).not.toBe(new Date().toISOString().slice(0, 7));
    expect(me.credits.period_start.slice(0, 7)).toBe(accountMonth);
    expect(me.credits.quota).toBe(130);
  });

  it('refuses a DATA_DIR with no store in one line, exit 2, and creates nothing there', async () => {
    const mistyped = join(mkdtempSync(join(tmpdir(), 'admin-')), 'dta');

    const exit = await run(ADMIN, ['list-accounts'], { DATA_DIR: mistyped });

    expect(exit.code).toBe(2);
    expect(exit.stderr).toBe(`admin: no embedded store at ${join(mistyped, 'avatar-service.db')}: check DATA_DIR; the server creates the store on its first start (npm start)\n`);
    expect(exit.stdout).toBe('');
    expect(existsSync(mistyped)).toBe(false);
  });

  // A value refused for what it is, however it is written: one line naming the flag, the value and the range.
  it.each([
    [['grant-credits', '--account', 'acct_x', '--credits', '-5']],
    [['grant-credits', '--account', 'acct_x', '--credits=-5']],
  ])('answers %j with the one line of the value, exit code 2', async (args) => {
    const exit = await run(ADMIN, args, storeEnv.env);

    expect(exit.code).toBe(2);
    expect(exit.stderr.trimEnd().split('\n')).toEqual(['admin: --credits takes a whole number from 0 to 1000000000 in plain decimal digits; got "-5"']);
  });

  it.each([
    [['grant-credits', '--account', 'acct_x', '--credits=5'], /^admin: no account acct_x$/],
    [['list-accounts', '--bogus'], /^admin: Unknown option '--bogus'\./],
    [['frobnicate'], /^admin: unknown command "frobnicate"$/],
    [['issue-key'], /^admin: --account is required$/],
  ])('answers %j with one line, the usage and exit code 2', async (args, message) => {
    const exit = await run(ADMIN, args, storeEnv.env);

    expect(exit.code).toBe(2);
    const [first, blank, usage] = exit.stderr.split('\n');
    expect(first).toMatch(message);
    expect(blank).toBe('');
    expect(usage).toMatch(/^Usage: npm run admin/);
    expect(exit.stderr).not.toMatch(NO_STACK);
  });
});
