// The files jobs make, on the embedded store: a folder beside its database file, one
// folder per job. The embedded store has one server, which is both API and worker, so
// the folder it writes is the folder it reads; the operator backs both up together.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { FileStore, StoredFile } from '../../domain/ports.ts';
import { STORE_DIR_MODE, type Db } from './database.ts';

/** The folder of the files, beside the database `file`. */
export const filesDirOf = (file: string) => join(dirname(file), 'files');

/** Only names the store itself would give: a job's ID and a file name, never a path. */
const SAFE_PART = /^[A-Za-z0-9_.-]+$/u;

function pathOf(dir: string, jobId: string, name: string): string {
  if (!SAFE_PART.test(jobId) || !SAFE_PART.test(name) || jobId.startsWith('.') || name.startsWith('.')) {
    throw new Error(`not a file of a job: ${jobId}/${name}`);
  }
  return join(dir, jobId, name);
}

/** Where a file's content type is kept: beside it, so that it is renamed into place with it. */
const typeFile = (path: string) => `${path}.type`;

/** Where the file-link key is kept: in the files' folder, backed up with them; no job's folder starts with a dot. */
const LINK_KEY_FILE = '.file-link-key';

export function embeddedFiles(dir: string, db: Db): FileStore {
  const listed = db.prepare('SELECT job_id FROM files_to_restore ORDER BY job_id LIMIT ?');
  const unlist = db.prepare('DELETE FROM files_to_restore WHERE job_id = ?');
  return {
    filesToRestore: async (limit) => (listed.all(limit) as { job_id: string }[]).map((r) => r.job_id),
    fileRestored: async (jobId) => void unlist.run(jobId),
    async linkKey(candidate) {
      const path = join(dir, LINK_KEY_FILE);
      try {
        return (await readFile(path, 'utf8')).trim();
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      await mkdir(dir, { recursive: true, mode: STORE_DIR_MODE });
      // Written whole under another name, then linked into place: link fails when a key is
      // already there, so a key is never replaced, nor read half written.
      const temp = `${path}.${randomBytes(6).toString('hex')}.part`;
      await writeFile(temp, `${candidate}\n`, { mode: 0o600, flush: true });
      try {
        await link(temp, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      } finally {
        await rm(temp, { force: true });
      }
      return (await readFile(path, 'utf8')).trim();
    },
    async putFile(jobId, name, contentType, body) {
      const path = pathOf(dir, jobId, name);
      await mkdir(dirname(path), { recursive: true, mode: STORE_DIR_MODE });
      // Written under a name no reader asks for, then renamed: a reader finds the old
      // file or the new one, whole, never part of one.
      const temp = `${path}.${randomBytes(6).toString('hex')}.part`;
      try {
        await pipeline(Readable.from(body), createWriteStream(temp, { mode: 0o600 }));
        const handle = await open(temp, 'r');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
        const typeTemp = `${temp}.type`;
        await pipeline(Readable.from([Buffer.from(contentType)]), createWriteStream(typeTemp, { mode: 0o600 }));
        await rename(typeTemp, typeFile(path));
        await rename(temp, path);
      } catch (error) {
        await rm(temp, { force: true });
        await rm(`${temp}.type`, { force: true });
        throw error;
      }
    },
    async getFile(jobId, name): Promise<StoredFile | null> {
      const path = pathOf(dir, jobId, name);
      let size: number;
      let contentType: string;
      try {
        size = (await stat(path)).size;
        const handle = await open(typeFile(path), 'r');
        try {
          contentType = (await handle.readFile('utf8')).trim();
        } finally {
          await handle.close();
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
      return {
        contentType,
        size,
        // Opened when first read, not before: an answer that sends no body (HEAD) opens nothing.
        async *read(start, end) {
          yield* createReadStream(path, { start, end });
        },
      };
    },
  };
}
