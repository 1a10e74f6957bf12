// Videos made before a job kept its file: on a store written before the migration that
// lists them, each ready video is listed, a worker makes its MP4 again and keeps it, and
// its video_url then answers with the file. One the engine cannot make again stays listed
// for the next start. Run on the embedded store, and on PostgreSQL in the scaled project.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import type { DomainDeps } from '../../src/domain/deps.ts';
import type { GenerationEngine } from '../../src/domain/engine.ts';
import { fileLinkSigner } from '../../src/domain/fileLinks.ts';
import { readLinkedFile } from '../../src/domain/files.ts';
import { restoreKeptFiles } from '../../src/domain/restoreFiles.ts';
import { createEmbeddedStore } from '../../src/storage/embedded/index.ts';
import { postgresFiles } from '../../src/storage/postgres-redis/files.ts';
import { migrate } from '../../src/storage/postgres-redis/database.ts';
import { embeddedBefore, postgresBefore } from '../support/migrations.ts';
import { scaled } from '../support/stores.ts';

const PLAN = JSON.stringify({ read: { minute: 120, day: 10_000 }, generation: { minute: 10, day: 300 } });
const VIDEO = 'vid_000000001before000000000000000000';
const BROKEN = 'vid_000000002before000000000000000000';
const VIDEO_INPUT = JSON.stringify({ avatar_id: 'av_before', script: 'Hello from before.', aspect_ratio: '9:16' });

/** An account, its ready avatar, two ready videos and a failed one, as a store of that time held them. */
const OLD_ROWS = (sandbox: string) => [
  `INSERT INTO accounts (id, name, monthly_credits, plan, signing_secret, created_at) VALUES ('acct_before', 'Before', 500, '${PLAN}', 'whsec_x', 1)`,
  `INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, credits, period, created_at, updated_at)
   VALUES ('av_before', 'avatar', 'acct_before', 'key_before', ${sandbox}, 'ready', '{"type":"prompt","name":"Before","prompt":"x"}', 10, '2026-11', 1, 1)`,
  ...[VIDEO, BROKEN].map(
    (id) => `INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, credits, period, created_at, updated_at)
     VALUES ('${id}', 'avatar_video', 'acct_before', 'key_before', ${sandbox}, 'ready', '${VIDEO_INPUT}', 20, '2026-11', 2, 2)`,
  ),
  `INSERT INTO jobs (id, kind, account_id, key_id, sandbox, status, input, credits, period, created_at, updated_at)
   VALUES ('vid_000000003before000000000000000000', 'avatar_video', 'acct_before', 'key_before', ${sandbox}, 'failed', '${VIDEO_INPUT}', 20, '2026-11', 3, 3)`,
];

const MP4 = new TextEncoder().encode('an MP4 made again');

/** Renders every video but BROKEN, whose render fails. */
const engine: GenerationEngine = {
  async generate(job) {
    if (job.id === BROKEN) throw new Error('the render failed');
    return { status: 'ready', result: {}, files: [{ name: 'video.mp4', contentType: 'video/mp4', read: () => Readable.from([MP4]) }] };
  },
  artifact: async () => null,
};

if (!scaled) describe('the embedded store, upgraded from before jobs kept their files', () => {
  it('lists its ready videos; a worker makes each MP4 again and its link answers with it; one that cannot be made stays listed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'restore-files-migration-'));
    const file = join(dir, 'store.db');
    try {
      embeddedBefore(file, (sql) => sql.includes('files_to_restore'));
      const old = new DatabaseSync(file);
      for (const sql of OLD_ROWS('1')) old.exec(sql);
      old.close();

      const store = createEmbeddedStore(file);
      try {
        expect(await store.files.filesToRestore(10)).toEqual([VIDEO, BROKEN]);
        expect(await store.files.getFile(VIDEO, 'video.mp4')).toBeNull();

        const outcome = await restoreKeptFiles({ store }, engine, new AbortController().signal);

        expect(outcome.restored).toBe(1);
        expect(outcome.failed.map((f) => f.jobId)).toEqual([BROKEN]);
        expect(await store.files.filesToRestore(10)).toEqual([BROKEN]);
        const deps = { store, clock: { now: () => Date.UTC(2026, 10, 2) }, fileLinkKey: 'a-file-link-key-for-this-test-only-0123' } as unknown as DomainDeps;
        const link = new URL(fileLinkSigner(deps.fileLinkKey, deps.clock.now()).url(`http://localhost/files/${VIDEO}/video.mp4`));
        const linked = await readLinkedFile(deps, engine, VIDEO, 'video.mp4', link.pathname, link.searchParams);
        expect(linked && 'size' in linked.file ? linked.file.size : null).toBe(MP4.length);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

if (scaled) describe('the PostgreSQL store, upgraded from before jobs kept their files', () => {
  it('lists the ready videos that have no kept MP4', async () => {
    const { pool, version, drop } = await postgresBefore('files to restore');
    try {
      for (const sql of OLD_ROWS('true')) await pool.query(sql);
      // BROKEN's file was kept already: only VIDEO needs making again.
      await pool.query(`INSERT INTO job_files (job_id, name, content_type, size, created_at) VALUES ('${BROKEN}', 'video.mp4', 'video/mp4', 0, 1)`);

      const applied = await migrate(pool);

      expect(applied).toContain(version);
      expect(await postgresFiles(pool).filesToRestore(10)).toEqual([VIDEO]);
    } finally {
      await drop();
    }
  });
});
