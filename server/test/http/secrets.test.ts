// Secrets never appear in logs or error bodies; keys are stored hashed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import { EMBEDDED_FILE, startService } from '../../src/runtime.ts';
import { tmpdir } from 'node:os';
import { startReceiver } from '../support/receiver.ts';
import { promptAvatar } from '../support/harness.ts';
import { createTestStoreEnv, type TestStoreEnv } from '../support/stores.ts';
import pg from 'pg';

/** Everything the store holds, as text. */
async function storedText(storeEnv: TestStoreEnv): Promise<string> {
  if (!storeEnv.env.DATABASE_URL) {
    // Closing the store checkpointed the write-ahead log into the one file.
    return readFileSync(join(storeEnv.env.DATA_DIR!, EMBEDDED_FILE)).toString('latin1');
  }
  const client = new pg.Client({ connectionString: storeEnv.env.DATABASE_URL });
  await client.connect();
  const tables = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`);
  let text = '';
  for (const { table_name } of tables.rows) text += JSON.stringify((await client.query(`SELECT * FROM ${table_name}`)).rows);
  await client.end();
  return text;
}

describe('secrets', () => {
  it('are neither logged nor stored in clear, through requests, failures and webhook deliveries', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const storeEnv = await createTestStoreEnv();
    const receiver = await startReceiver();
    receiver.script = (_p, n) => ({ status: n === 0 ? 500 : 200 });
    const config = loadConfig({ PORT: '0', ...storeEnv.env, ENGINE_AVATAR_MS: '0', JOB_POLL_MS: '20', WEBHOOK_BASE_DELAY_MS: '30', WEBHOOK_POLL_MS: '20' });
    const svc = await startService(config, { log: pino({ level: 'trace' }, sink) });
    try {
      const { api_key, signing_secret } = await createAccount(svc.store, svc.domain.clock);
      const headers = { Authorization: `Bearer ${api_key}`, 'Content-Type': 'application/json' };

      await fetch(`${svc.url}/v1/avatars`, { method: 'POST', headers, body: JSON.stringify(promptAvatar({ webhook_url: `${receiver.url}/h` })) });
      await fetch(`${svc.url}/v1/avatars`, { method: 'POST', headers, body: '{broken' });
      await fetch(`${svc.url}/v1/me`, { headers: { Authorization: `Bearer ${api_key}x` } });
      await receiver.waitFor(2);
      await new Promise((r) => setTimeout(r, 100));
      await svc.stop();

      const logs = lines.join('');
      const database = await storedText(storeEnv);
      expect(logs).toContain('webhook delivered'); // the logs were really captured
      expect(logs).not.toContain(api_key);
      expect(logs).not.toContain(signing_secret);
      expect(database).toContain(api_key.slice(0, 12)); // the displayed prefix is there, so the scan is real
      expect(database).not.toContain(api_key);
    } finally {
      await svc.stop();
      await receiver.close();
      await storeEnv.drop();
    }
  });
});
