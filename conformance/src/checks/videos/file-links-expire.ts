// ND-FILE-LINKS: a file link a read gives is valid for the lifetime the implementation
// states, on its account's time, and no longer; a fresh read renews it. Seen without
// waiting days by moving the main key's sandbox clock, in the clock phase with the other
// checks that move it far.
import { defineCheck, SANDBOX } from '../../check.ts';
import type { CheckContext } from '../../context.ts';
import { at, type Json } from '../../implementation/profile.ts';
import { describeDownload, download, type Fetched } from '../../observe/download.ts';
import { fail, notApplicable, PrerequisiteError, skip } from '../../outcome.ts';
import { isJson } from '../../world.ts';
import { videoFile } from '../media.ts';

/**
 * How far inside its lifetime the link is tried, and past it: the seconds between the read
 * that gave the link and the move of the clock (a loaded machine, a slow service) must stay
 * below it, and a service's rounding of its expiry to the second is well within it.
 */
const MARGIN_SECONDS = 120;

/** Bytes asked for of the file: whether a link serves is in its status, not in the whole video. */
const FIRST_BYTES = { Range: 'bytes=0-15' };

/** The code the contract gives an expired link (ND-FILE-LINKS). */
const EXPIRED_CODE = 'file_link_expired';

export default defineCheck({
  id: 'videos.file-links-expire',
  title: 'A file link is valid for the stated lifetime, refused after it, and renewed by a fresh read',
  asserts:
    "Where the implementation profile states a link lifetime (files.link_lifetime_seconds) and the main key has a sandbox clock: the ready video's link from a fresh read answers with the file after the clock moves to just within the lifetime, is refused (4xx; under the contract 403 file_link_expired) once the clock is past it, and the record read again gives a link that answers with the file.",
  clauses: ['VID-READY-URL'],
  decisions: ['ND-FILE-LINKS', 'ND-SANDBOX-CLOCK'],
  profiles: SANDBOX,
  // The source says nothing of link lifetimes: a service whose links never expire is not wrong.
  notRequiredIn: ['core'],
  // No `needs: ['clock']`: without a clock the lifetime cannot be seen without waiting it
  // out, which the runner never does, so the check is not applicable rather than skipped.
  phase: 'clock',
  async run(ctx) {
    const lifetime = ctx.shape.profile.files.linkLifetimeSeconds;
    if (lifetime === null) notApplicable('the implementation profile states no file-link lifetime (files.link_lifetime_seconds)');
    if (lifetime <= 2 * MARGIN_SECONDS) notApplicable(`the stated lifetime, ${lifetime} s, is too short to try within and past it with the clock's ${MARGIN_SECONDS} s margin`);
    if (!ctx.clock.has('main')) notApplicable(`the lifetime is seen only by moving a sandbox clock, and the main key has none (${ctx.clock.reason ?? 'not found'}): a run never waits out ${lifetime} s`);
    const pointer = ctx.shape.profile.files.video;
    const job = await ctx.world.video();
    const seen = await job.settled;
    if (job.ended !== 'ready') throw new PrerequisiteError(`the run's video ended ${String(ctx.shape.state(seen))}, not ready`);
    // A link that never served is videos.ready-url-serves-mp4's to judge, not its lifetime (the run's shared download, no request more).
    const served = await videoFile(ctx);
    if (!served.fetched.ok || served.fetched.download.status !== 200) throw new PrerequisiteError("the ready video's link served no file before its lifetime was tried (videos.ready-url-serves-mp4 says why)");
    const path = `/v1/avatar-videos/${job.id!}`;

    const first = await linkOf(ctx, path, pointer, job.key, 'a fresh read for a link whose lifetime starts now');
    // A link that serves nothing even now is videos.ready-url-serves-mp4's to judge, not its lifetime.
    const now = await fetchFile(ctx, first, path);
    if (!serves(now)) throw new PrerequisiteError(`${path}'s link serves no file even before the clock moves (${shown(now)}): see videos.ready-url-serves-mp4`);
    if (!(await ctx.clock.advance(job.key, lifetime - MARGIN_SECONDS))) skip(`the ${job.key} key's sandbox clock refused to move ${lifetime - MARGIN_SECONDS} s`);
    const within = await fetchFile(ctx, first, path);
    if (!serves(within)) {
      fail({
        clause: 'ND-FILE-LINKS',
        message: `${path}'s link answered no file ${MARGIN_SECONDS} s before its stated lifetime of ${lifetime} s ended`,
        expected: 'the file (200 or 206)',
        received: shown(within),
        fix: 'Keep a link valid for the whole lifetime the profile states, counted from the read that gave it.',
      });
    }

    if (!(await ctx.clock.advance(job.key, 2 * MARGIN_SECONDS))) skip(`the ${job.key} key's sandbox clock refused to move ${2 * MARGIN_SECONDS} s`);
    const past = await fetchFile(ctx, first, path);
    if (!past.ok || past.download.status < 400 || past.download.status >= 500) {
      fail({
        clause: 'ND-FILE-LINKS',
        message: `${path}'s link still answered ${MARGIN_SECONDS} s after its stated lifetime of ${lifetime} s ended`,
        expected: ctx.contract ? `403 ${EXPIRED_CODE}` : 'a refusal (4xx)',
        received: shown(past),
        fix: 'Refuse a link once its expiry has passed on the account\'s time.',
      });
    }
    if (ctx.contract && (past.download.status !== 403 || codeOf(past.download.body) !== EXPIRED_CODE)) {
      fail({ clause: 'ND-FILE-LINKS', message: `${path}'s expired link was refused without saying it expired`, expected: `403 with code ${EXPIRED_CODE}`, received: shown(past), fix: `Answer an expired link 403 with code ${EXPIRED_CODE}.` });
    }

    const renewed = await linkOf(ctx, path, pointer, job.key, 'the record read again after its link expired');
    const fresh = await fetchFile(ctx, renewed, path);
    if (!serves(fresh)) {
      fail({
        clause: 'VID-READY-URL',
        message: `${path} read after its link expired gave a link that answered no file`,
        expected: 'the file (200 or 206) at the link a fresh read gives',
        received: `${renewed === first ? 'the same link again; ' : ''}${shown(fresh)}`,
        fix: 'Give each read of a ready record a link valid for the whole lifetime from then.',
      });
    }
  },
});

/** The record's link read now: a read starts the link's lifetime. */
async function linkOf(ctx: CheckContext, path: string, pointer: string, key: Parameters<CheckContext['http']['send']>[0]['key'], note: string): Promise<string> {
  const read = await ctx.http.send({ key, method: 'GET', path, note });
  // A record that left ready owes no file: states.terminal-never-changes judges the change.
  if (read.status === 200 && ctx.shape.terminal(ctx.shape.state(read.json)) !== 'ready') throw new PrerequisiteError(`${path}, ready before, now reads ${String(ctx.shape.state(read.json))}`);
  const link = read.status === 200 && isJson(read.json) ? at(read.json as Json, pointer) : undefined;
  if (typeof link !== 'string' || link === '') throw new PrerequisiteError(`${path} answered ${read.status} without a link at ${pointer}`);
  return link;
}

/** The link's first bytes, fetched as a player would: no key, resolved against the record's URL. */
function fetchFile(ctx: CheckContext, link: string, path: string): Promise<Fetched> {
  let url = link;
  try {
    url = new URL(link, ctx.http.baseUrl + path).href;
  } catch {
    // Left as written: the download reports what it could not fetch.
  }
  return download(url, { headers: FIRST_BYTES, apiOrigin: new URL(ctx.http.baseUrl).origin, timeoutMs: ctx.options.requestTimeoutMs, signal: ctx.deadline.signal });
}

const serves = (fetched: Fetched): boolean => fetched.ok && (fetched.download.status === 200 || fetched.download.status === 206);

const shown = (fetched: Fetched): string => (fetched.ok ? describeDownload(fetched.download) : fetched.problem);

function codeOf(body: Uint8Array): unknown {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(body)) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as { code?: unknown }).code : undefined;
  } catch {
    return undefined;
  }
}
