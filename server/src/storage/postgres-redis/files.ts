// The files jobs make, on PostgreSQL: every API process of the deployment reads the
// database, so a file a worker keeps there is served by any of them, whichever machine
// each runs on, with nothing more to set up or back up. A file is kept in pieces of
// CHUNK_BYTES (job_file_chunks), so neither its writing nor a ranged read holds more than
// a piece at a time, and its row in job_files is written in the same transaction: a
// reader finds a file whole or not at all.
import type pg from 'pg';
import type { FileStore, StoredFile } from '../../domain/ports.ts';
import { num } from '../rows.ts';
import { guarded, transaction } from './database.ts';

/** Bytes of a piece: large enough that a 20 MB video is 20 rows, small enough to hold in memory. */
export const CHUNK_BYTES = 1024 * 1024;

/** Fills pieces of CHUNK_BYTES from a stream of any-sized buffers; the last may be shorter. */
async function* pieces(body: AsyncIterable<Uint8Array>): AsyncIterable<Buffer> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  for await (const chunk of body) {
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (heldBytes + rest.length >= CHUNK_BYTES) {
      const take = CHUNK_BYTES - heldBytes;
      held.push(rest.subarray(0, take));
      yield Buffer.concat(held);
      rest = rest.subarray(take);
      held = [];
      heldBytes = 0;
    }
    if (rest.length > 0) {
      held.push(Buffer.from(rest)); // a copy: the stream may reuse its buffer
      heldBytes += rest.length;
    }
  }
  if (heldBytes > 0) yield Buffer.concat(held);
}

export function postgresFiles(pool: pg.Pool): FileStore {
  return {
    async filesToRestore(limit) {
      const r = await guarded(() => pool.query('SELECT job_id FROM files_to_restore ORDER BY job_id LIMIT $1', [limit]));
      return (r.rows as { job_id: string }[]).map((row) => row.job_id);
    },
    async fileRestored(jobId) {
      await guarded(() => pool.query('DELETE FROM files_to_restore WHERE job_id = $1', [jobId]));
    },
    async linkKey(candidate) {
      // The first process to insert wins; every process, that one included, reads the winner.
      await guarded(() => pool.query("INSERT INTO service_keys (name, value) VALUES ('file_links', $1) ON CONFLICT (name) DO NOTHING", [candidate]));
      const r = await guarded(() => pool.query("SELECT value FROM service_keys WHERE name = 'file_links'"));
      return (r.rows[0] as { value: string }).value;
    },
    async putFile(jobId, name, contentType, body) {
      await transaction(pool, async (client) => {
        await client.query('DELETE FROM job_file_chunks WHERE job_id = $1 AND name = $2', [jobId, name]);
        await client.query('DELETE FROM job_files WHERE job_id = $1 AND name = $2', [jobId, name]);
        let size = 0;
        let seq = 0;
        for await (const piece of pieces(body)) {
          await client.query('INSERT INTO job_file_chunks (job_id, name, seq, data) VALUES ($1, $2, $3, $4)', [jobId, name, seq++, piece]);
          size += piece.length;
        }
        await client.query('INSERT INTO job_files (job_id, name, content_type, size, created_at) VALUES ($1, $2, $3, $4, $5)', [jobId, name, contentType, size, Date.now()]);
      });
    },
    async getFile(jobId, name): Promise<StoredFile | null> {
      const r = await guarded(() => pool.query('SELECT content_type, size FROM job_files WHERE job_id = $1 AND name = $2', [jobId, name]));
      const row = r.rows[0] as { content_type: string; size: string | number } | undefined;
      if (!row) return null;
      return {
        contentType: row.content_type,
        size: num(row.size),
        async *read(start, end) {
          // One piece per query, and of it only the bytes asked for (substring reads only
          // those slices of a value stored uncompressed).
          for (let seq = Math.floor(start / CHUNK_BYTES); seq * CHUNK_BYTES <= end; seq++) {
            const from = Math.max(start - seq * CHUNK_BYTES, 0);
            const to = Math.min(end - seq * CHUNK_BYTES, CHUNK_BYTES - 1);
            const piece = await guarded(() =>
              pool.query('SELECT substring(data FROM $4 FOR $5) AS data FROM job_file_chunks WHERE job_id = $1 AND name = $2 AND seq = $3', [jobId, name, seq, from + 1, to - from + 1]),
            );
            const data = (piece.rows[0] as { data: Buffer } | undefined)?.data;
            if (!data) throw new Error(`piece ${seq} of ${jobId}/${name} is missing`);
            yield data;
          }
        },
      };
    },
  };
}
