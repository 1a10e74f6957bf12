// The releases of the contract and the bundles they point at. Git tags do not travel
// with every clone (a CI checkout fetches none by default), so a release is recorded in
// openapi/releases.json: its version (the document's info.version at that commit), a
// commit on main, a date and notes for client developers. The file lists releases
// oldest first; a new release is appended.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
/** Where the bundle sits, in the working tree and at every commit. */
export const BUNDLE_FILE = 'generated/openapi.json';
export const RELEASES_FILE = 'openapi/releases.json';

export interface Release {
  version: string;
  commit: string;
  /** YYYY-MM-DD. */
  date: string;
  notes: string;
}

/** What went wrong reading the history, in one line a person can act on. */
export class HistoryError extends Error {
  override name = 'HistoryError';
}

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
      typeof release.commit === 'string' &&
      /^[0-9a-f]{40}$/.test(release.commit) &&
      typeof release.date === 'string' &&
      /^\d{4}-\d{2}-\d{2}$/.test(release.date) &&
      typeof release.notes === 'string';
    if (!valid) throw new HistoryError(`${RELEASES_FILE}: entry ${i + 1} needs version, commit (a full 40-digit SHA), date (YYYY-MM-DD) and notes`);
    return release as Release;
  });
}

/** The bundle as committed at `ref`. */
export function bundleAt(repo: string, ref: string): Record<string, unknown> {
  const commit = commitOf(repo, ref);
  let text: string;
  try {
    text = git(repo, ['show', `${commit}:${BUNDLE_FILE}`]);
  } catch {
    throw new HistoryError(`${ref} has no ${BUNDLE_FILE}`);
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new HistoryError(`${BUNDLE_FILE} at ${ref} is not JSON: ${(error as Error).message}`);
  }
}

/** The bundle in the working tree. */
export function workingBundle(repo: string): Record<string, unknown> {
  const file = join(repo, BUNDLE_FILE);
  if (!existsSync(file)) throw new HistoryError(`no ${BUNDLE_FILE} in ${repo}: run npm run generate`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new HistoryError(`${file} is not JSON: ${(error as Error).message}`);
  }
}

/** The full SHA of a ref, or a HistoryError that says why there is none. */
export function commitOf(repo: string, ref: string): string {
  try {
    return git(repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).trim();
  } catch {
    throw new HistoryError(`unknown git ref "${ref}"${shallowHint(repo)}`);
  }
}

/**
 * What a change is measured against by default: the last release, or, before the first
 * one, the commit that added the bundle.
 */
export function defaultBase(repo: string = ROOT): { ref: string; label: string } {
  const last = loadReleases(repo).at(-1);
  if (last) return { ref: last.commit, label: `release ${last.version}` };
  // In a shallow clone the oldest commit present would pass for the one that added the bundle.
  const shallow = shallowHint(repo);
  if (shallow) throw new HistoryError(`cannot find the commit that added ${BUNDLE_FILE}${shallow}`);
  let first: string | undefined;
  try {
    first = git(repo, ['log', '--diff-filter=A', '--format=%H', '--', BUNDLE_FILE]).trim().split('\n').filter(Boolean).at(-1);
  } catch (error) {
    throw new HistoryError(`cannot read the git history of ${repo}: ${firstLine(error)}`);
  }
  if (!first) throw new HistoryError(`no commit adds ${BUNDLE_FILE}`);
  return { ref: first, label: `the first commit of ${BUNDLE_FILE}` };
}

function shallowHint(repo: string): string {
  try {
    if (!existsSync(repo)) return `: ${repo} does not exist`;
    if (git(repo, ['rev-parse', '--is-shallow-repository']).trim() === 'true') {
      return ': this is a shallow clone, fetch the history first (git fetch --unshallow)';
    }
    return '';
  } catch {
    return `: ${repo} is not a git repository`;
  }
}

function git(repo: string, args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
}

function firstLine(error: unknown): string {
  const { stderr, message } = error as { stderr?: string; message: string };
  return (stderr || message).trim().split('\n')[0] ?? '';
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
      accepted.reason.length > 0;
    if (!valid) throw new HistoryError(`${ACCEPTED_BREAKS_FILE}: entry ${i + 1} needs rule, where (a non-empty list), date (YYYY-MM-DD) and reason`);
    return accepted as AcceptedBreak;
  });
}
