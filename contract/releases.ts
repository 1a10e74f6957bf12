// The releases of the contract and the bundles they point at. A release is recorded in
// openapi/releases.json: its version (the document's info.version at that commit), the
// commit on main it was made from, a date and notes for client developers; oldest first,
// a new release appended. Its bundle is kept in the repository, openapi/releases/<version>.json,
// exactly as that commit holds generated/openapi.json (how it is made, and why it is never
// edited: openapi/releases/README.md). What compares with a release (the gate,
// `npm run contract:diff`, the changelog) reads that file, as published specs are compared,
// and never git: a CI checkout fetches one commit and no tags, and a source tarball or a
// Docker build context has no .git at all. Git is read only for a ref asked for by name
// (contract:diff's --base and --head).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
/** Where the bundle sits, in the working tree and at every commit. */
export const BUNDLE_FILE = 'generated/openapi.json';
export const RELEASES_FILE = 'openapi/releases.json';
/** The folder of the released bundles, one `<version>.json` each. */
export const RELEASED_BUNDLES_DIR = 'openapi/releases';

type Json = Record<string, unknown>;

export interface Release {
  version: string;
  commit: string;
  /** YYYY-MM-DD. */
  date: string;
  notes: string;
}

/** What went wrong reading a release or the history, in one line a person can act on. */
export class HistoryError extends Error {
  override name = 'HistoryError';
}

// A version names a file, so it is held to semver's form, which has no path separator.
const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

export function loadReleases(repo: string = ROOT): Release[] {
  const file = join(repo, RELEASES_FILE);
  if (!existsSync(file)) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new HistoryError(`${RELEASES_FILE} is not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new HistoryError(`${RELEASES_FILE} must be an array of releases`);
  return parsed.map((entry: unknown, i) => {
    const release = entry as Partial<Release> | null;
    const valid =
      typeof release?.version === 'string' &&
      VERSION.test(release.version) &&
      typeof release.commit === 'string' &&
      /^[0-9a-f]{40}$/.test(release.commit) &&
      typeof release.date === 'string' &&
      /^\d{4}-\d{2}-\d{2}$/.test(release.date) &&
      typeof release.notes === 'string';
    if (!valid) throw new HistoryError(`${RELEASES_FILE}: entry ${i + 1} needs version (like 1.2.0), commit (a full 40-digit SHA), date (YYYY-MM-DD) and notes`);
    return release as Release;
  });
}

/** The file that keeps a release's bundle, relative to the repository. */
export function releasedBundleFile(release: Pick<Release, 'version'>): string {
  return `${RELEASED_BUNDLES_DIR}/${release.version}.json`;
}

/** A release's bundle, as kept in the repository; no git is read. */
export function releasedBundle(repo: string, release: Release): Json {
  const name = releasedBundleFile(release);
  const file = join(repo, name);
  if (!existsSync(file)) {
    throw new HistoryError(`release ${release.version} has no bundle kept in ${name}: make it from commit ${release.commit} as ${RELEASED_BUNDLES_DIR}/README.md says`);
  }
  let bundle: Json;
  try {
    bundle = JSON.parse(readFileSync(file, 'utf8')) as Json;
  } catch (error) {
    throw new HistoryError(`${name} is not JSON: ${(error as Error).message}`);
  }
  // A file copied from the wrong commit or renamed would otherwise pass for the release.
  const version = (bundle.info as { version?: unknown } | undefined)?.version;
  if (version !== release.version) throw new HistoryError(`${name} is the bundle of version ${JSON.stringify(version)}, not of release ${release.version}`);
  return bundle;
}

/** The bundle as committed at `ref`, read from git: for a ref asked for by name. */
export function bundleAt(repo: string, ref: string): Json {
  const commit = commitOf(repo, ref);
  let text: string;
  try {
    text = git(repo, ['show', `${commit}:${BUNDLE_FILE}`]);
  } catch {
    throw new HistoryError(`${ref} has no ${BUNDLE_FILE}`);
  }
  try {
    return JSON.parse(text) as Json;
  } catch (error) {
    throw new HistoryError(`${BUNDLE_FILE} at ${ref} is not JSON: ${(error as Error).message}`);
  }
}

/** The bundle in the working tree. */
export function workingBundle(repo: string): Json {
  const file = join(repo, BUNDLE_FILE);
  if (!existsSync(file)) throw new HistoryError(`no ${BUNDLE_FILE} in ${repo}: run npm run generate`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Json;
  } catch (error) {
    throw new HistoryError(`${file} is not JSON: ${(error as Error).message}`);
  }
}

/** The full SHA of a ref, or a HistoryError that says why there is none. */
export function commitOf(repo: string, ref: string): string {
  try {
    return git(repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).trim();
  } catch {
    const missing = missingHistory(repo);
    throw new HistoryError(`unknown git ref "${ref}"${missing ? `: ${missing}` : ''}`);
  }
}

/**
 * Why `repo` may lack a commit that exists (it does not exist, is no git repository of
 * its own, or is a shallow clone), or undefined when its history is whole.
 */
export function missingHistory(repo: string): string | undefined {
  if (!existsSync(repo)) return `${repo} does not exist`;
  let top: string;
  let shallow: string;
  try {
    [top = '', shallow = ''] = git(repo, ['rev-parse', '--show-toplevel', '--is-shallow-repository']).trim().split('\n');
  } catch {
    return `${repo} is not a git repository`;
  }
  // A tarball unpacked inside another repository would otherwise be judged by that one's history.
  if (realpathSync(top) !== realpathSync(repo)) return `${repo} is not a git repository (it lies inside ${top})`;
  if (shallow === 'true') return 'this is a shallow clone, fetch the history first (git fetch --unshallow)';
  return undefined;
}

function git(repo: string, args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
}

export const ACCEPTED_BREAKS_FILE = 'openapi/accepted-breaks.json';

/**
 * Changes the classifier calls breaking that a person judged to break no client, each
 * with the reason: most often a rule the service already kept, which the document now
 * states in a schema (a tighter request constraint on what was refused anyway). Matched
 * by rule and location exactly, so a new change in the same place is still caught.
 */
export interface AcceptedBreak {
  rule: string;
  where: string[];
  /** YYYY-MM-DD. */
  date: string;
  reason: string;
  /** What a client must do about it, if anything: the changelog prints it beside the reason. */
  action?: string;
}

export function loadAcceptedBreaks(repo: string = ROOT): AcceptedBreak[] {
  const file = join(repo, ACCEPTED_BREAKS_FILE);
  if (!existsSync(file)) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new HistoryError(`${ACCEPTED_BREAKS_FILE} is not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new HistoryError(`${ACCEPTED_BREAKS_FILE} must be an array`);
  return parsed.map((entry: unknown, i) => {
    const accepted = entry as Partial<AcceptedBreak> | null;
    const valid =
      typeof accepted?.rule === 'string' &&
      Array.isArray(accepted.where) &&
      accepted.where.length > 0 &&
      accepted.where.every((w) => typeof w === 'string') &&
      typeof accepted.date === 'string' &&
      /^\d{4}-\d{2}-\d{2}$/.test(accepted.date) &&
      typeof accepted.reason === 'string' &&
      accepted.reason.length > 0 &&
      (accepted.action === undefined || (typeof accepted.action === 'string' && accepted.action.length > 0));
    if (!valid) throw new HistoryError(`${ACCEPTED_BREAKS_FILE}: entry ${i + 1} needs rule, where (a non-empty list), date (YYYY-MM-DD) and reason, and action if any (a non-empty string)`);
    return accepted as AcceptedBreak;
  });
}
