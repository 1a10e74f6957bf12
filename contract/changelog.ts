// The contract's changelog, for client developers: what changed release by release,
// newest first, and what is waiting for the next release. It is the breaking-change
// gate's own diff (compatibility.ts) written out, with the decisions on the breaks it
// accepted (openapi/accepted-breaks.json), so the gate, contract:diff and the changelog
// can never disagree and the changelog tells why a break was accepted itself.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compareDocuments, markAccepted, type Change } from './compatibility.ts';
import { HistoryError, ROOT, loadAcceptedBreaks, loadReleases, releasedBundle, workingBundle, type AcceptedBreak, type Release } from './releases.ts';

type Json = Record<string, unknown>;

export const FIRST_RELEASE_NOTES = 'First release of /v1.';

export interface ChangelogSection {
  heading: string;
  /** The release's notes, or what the section compares. */
  intro: string;
  /** Unreleased only: what the diff cannot show, written by hand (UNRELEASED_NOTES_FILE). */
  notes?: string[];
  changes: Change[];
}

/**
 * Notes on the unreleased changes that the diff cannot tell a client, the contract's own
 * Markdown, one a string: a description that now follows a newer revision of a standard,
 * say, which the gate counts among the changes clients do not see. When a release is
 * recorded they move into its notes in openapi/releases.json.
 */
export const UNRELEASED_NOTES_FILE = 'openapi/unreleased-notes.json';

export function loadUnreleasedNotes(repo: string = ROOT): string[] {
  const file = join(repo, UNRELEASED_NOTES_FILE);
  if (!existsSync(file)) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new HistoryError(`${UNRELEASED_NOTES_FILE} is not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed) || !parsed.every((note) => typeof note === 'string' && note.trim().length > 0)) {
    throw new HistoryError(`${UNRELEASED_NOTES_FILE} must be an array of notes, each a non-empty string`);
  }
  return parsed as string[];
}

/**
 * One section per release, newest first, and "Unreleased" on top: the working bundle
 * against the last release. `bundleOf` reads a release's bundle; `accepted` are the
 * breaks a person accepted, each marked on the changes it names with its reason.
 */
export function changelogSections(releases: Release[], bundleOf: (release: Release) => Json, working: Json, accepted: readonly AcceptedBreak[] = [], unreleasedNotes: readonly string[] = []): ChangelogSection[] {
  const compare = (base: Json, head: Json) => markAccepted(compareDocuments(base, head), accepted);
  const last = releases.at(-1);
  const pending = last ? compare(bundleOf(last), working) : [];
  const intro = !last ? 'No release is recorded yet (openapi/releases.json).' : pending.length ? `Changes since ${last.version}, not yet released.` : `No changes since ${last.version}.`;
  const unreleased: ChangelogSection = { heading: 'Unreleased', intro, ...(unreleasedNotes.length > 0 ? { notes: [...unreleasedNotes] } : {}), changes: pending };
  const released = releases.map((release, i): ChangelogSection => {
    const previous = releases[i - 1];
    const heading = `${release.version} (${release.date})`;
    if (!previous) return { heading, intro: release.notes || FIRST_RELEASE_NOTES, changes: [] };
    return { heading, intro: release.notes, changes: compare(bundleOf(previous), bundleOf(release)) };
  });
  return [unreleased, ...released.reverse()];
}

interface Entry {
  /** The member the change is about (`credits.used`), when it is about one. */
  member?: string;
  /** Where: one location, or every one the same member change reaches. */
  locations: string[];
  rule: string;
  detail?: string;
}

// A change to a shared component reaches every operation and webhook that uses it; it
// is listed once, with its locations, rather than once per location.
function entries(changes: Change[]): Entry[] {
  const grouped = new Map<string, Entry>();
  changes.forEach((change, i) => {
    const split = change.where.indexOf(': ');
    const member = split < 0 ? undefined : change.where.slice(split + 2);
    const location = split < 0 ? change.where : change.where.slice(0, split);
    const key = member === undefined ? `#${i}` : JSON.stringify([member, change.rule, change.detail]);
    const entry = grouped.get(key);
    if (entry) entry.locations.push(location);
    else grouped.set(key, { member, locations: [location], rule: change.rule, detail: change.detail });
  });
  return [...grouped.values()];
}

/** Accepted breaks of one decision: the changes, why they were accepted and what a client must do. */
interface Decision {
  reason: string;
  action?: string;
  entries: Entry[];
}

interface Blocks {
  /** Breaks no one accepted: the gate refuses them, so only the unreleased can hold any. */
  breaking: Entry[];
  additive: Entry[];
  accepted: Decision[];
  others: number;
}

/** Additive changes, then the accepted breaks by decision, with any refused break first; the rest only counted. */
function blocks(section: ChangelogSection): Blocks {
  const breaks = section.changes.filter((change) => change.kind === 'breaking');
  const accepted: Decision[] = [];
  for (const reason of new Set(breaks.flatMap((change) => (change.accepted === undefined ? [] : [change.accepted])))) {
    const decided = breaks.filter((change) => change.accepted === reason);
    const action = decided.find((change) => change.action !== undefined)?.action;
    accepted.push({ reason, ...(action === undefined ? {} : { action }), entries: entries(decided) });
  }
  return {
    breaking: entries(breaks.filter((change) => change.accepted === undefined)),
    additive: entries(section.changes.filter((change) => change.kind === 'additive')),
    accepted,
    others: section.changes.filter((change) => change.kind === 'other').length,
  };
}

const REFUSED_NOTE = 'The breaking-change gate refuses these: before a release each is made additive, accepted with its reason in openapi/accepted-breaks.json, or shipped as /v2.';
const NO_ACTION = 'Nothing.';

function othersLine(count: number): string {
  return `${count} other change${count === 1 ? '' : 's'} that clients do not see (descriptions, examples, component names, paths outside /v1).`;
}

function titleOf(working: Json): string {
  const title = (working.info as Json | undefined)?.title;
  return `Changelog: ${typeof title === 'string' ? title : 'the API'}`;
}

const PREAMBLE =
  'What changed in the contract, for client developers, newest first. Within /v1 a change is either additive (a new optional request member, a new response member, a new error code or event type: a client that ignores members it does not know keeps working) or a break that was accepted: one the breaking-change gate flags but that was judged to break no client, or only a client that relied on something the contract now states differently. Each accepted break says why it was accepted and what a client must do, if anything. Any other break ships as /v2.';

/**
 * A change's detail as parts: a value quoted from the contract (JSON, such as a pattern:
 * shown as code, unescaped), a description quoted from it (“…”: the contract's own
 * Markdown) and the classifier's words between them.
 */
type Part = { kind: 'value' | 'prose' | 'text'; text: string };

export function detailParts(detail: string): Part[] {
  const parts: Part[] = [];
  let at = 0;
  for (const match of detail.matchAll(/"(?:[^"\\]|\\.)*"|“[^”]*”/g)) {
    if (match.index > at) parts.push({ kind: 'text', text: detail.slice(at, match.index) });
    const quoted = match[0];
    if (quoted.startsWith('“')) parts.push({ kind: 'prose', text: quoted.slice(1, -1) });
    else parts.push(jsonString(quoted));
    at = match.index + quoted.length;
  }
  if (at < detail.length) parts.push({ kind: 'text', text: detail.slice(at) });
  return parts;
}

function jsonString(quoted: string): Part {
  try {
    return { kind: 'value', text: String(JSON.parse(quoted)) };
  } catch {
    return { kind: 'text', text: quoted };
  }
}

/** A Markdown code span holding any text: a fence longer than its longest run of backticks. */
function codeSpan(text: string): string {
  const fence = '`'.repeat(Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length)) + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

export function renderMarkdown(sections: ChangelogSection[], title: string): string {
  const detail = (text: string) => detailParts(text).map((part) => (part.kind === 'value' ? codeSpan(part.text) : part.kind === 'prose' ? `“${part.text}”` : escapeMarkdown(part.text))).join('');
  const line = (entry: Entry) => {
    const what = `${entry.rule}${entry.detail ? ` (${detail(entry.detail)})` : ''}`;
    const where = entry.locations.map(codeSpan).join(', ');
    return entry.member === undefined ? `- ${where}: ${what}` : `- ${codeSpan(entry.member)}: ${what}, in ${where}`;
  };
  const out = [`# ${title}`, '', PREAMBLE, ''];
  for (const section of sections) {
    out.push(`## ${section.heading}`, '', section.intro, '');
    if (section.notes) out.push(...section.notes.map((note) => `- ${note}`), '');
    const { breaking, additive, accepted, others } = blocks(section);
    if (breaking.length > 0) out.push('### Breaking changes', '', REFUSED_NOTE, '', ...breaking.map(line), '');
    if (additive.length > 0) out.push('### Additive changes', '', ...additive.map(line), '');
    if (accepted.length > 0) {
      out.push('### Accepted breaks', '');
      for (const decision of accepted) out.push(...decision.entries.map(line), '', `Why it was accepted: ${decision.reason}`, '', `What a client must do: ${decision.action ?? NO_ACTION}`, '');
    }
    if (others > 0) out.push(othersLine(others), '');
  }
  return out.join('\n');
}

export function renderHtml(sections: ChangelogSection[], title: string): string {
  const code = (text: string) => `<code>${escapeHtml(text)}</code>`;
  // The contract's Markdown in a quoted description: its code spans as code, the rest as text.
  const prose = (text: string) => text.split(/(`[^`]*`)/).map((piece) => (piece.startsWith('`') && piece.endsWith('`') && piece.length > 1 ? code(piece.slice(1, -1)) : escapeHtml(piece))).join('');
  const detail = (text: string) => detailParts(text).map((part) => (part.kind === 'value' ? code(part.text) : part.kind === 'prose' ? `“${prose(part.text)}”` : escapeHtml(part.text))).join('');
  const item = (entry: Entry) => {
    const what = `${escapeHtml(entry.rule)}${entry.detail ? ` (${detail(entry.detail)})` : ''}`;
    const where = entry.locations.map(code).join(', ');
    return `<li>${entry.member === undefined ? `${where}: ${what}` : `${code(entry.member)}: ${what}, in ${where}`}</li>`;
  };
  const body: string[] = [`<h1>${escapeHtml(title)}</h1>`, `<p>${escapeHtml(PREAMBLE)}</p>`];
  for (const section of sections) {
    body.push(`<section>`, `<h2>${escapeHtml(section.heading)}</h2>`, `<p>${escapeHtml(section.intro)}</p>`);
    if (section.notes) body.push('<ul class="notes">', ...section.notes.map((note) => `<li>${prose(note)}</li>`), '</ul>');
    const { breaking, additive, accepted, others } = blocks(section);
    if (breaking.length > 0) body.push('<h3>Breaking changes</h3>', `<p>${escapeHtml(REFUSED_NOTE)}</p>`, '<ul>', ...breaking.map(item), '</ul>');
    if (additive.length > 0) body.push('<h3>Additive changes</h3>', '<ul>', ...additive.map(item), '</ul>');
    if (accepted.length > 0) {
      body.push('<h3>Accepted breaks</h3>');
      for (const decision of accepted) {
        body.push('<ul>', ...decision.entries.map(item), '</ul>', `<p><strong>Why it was accepted:</strong> ${prose(decision.reason)}</p>`, `<p><strong>What a client must do:</strong> ${prose(decision.action ?? NO_ACTION)}</p>`);
      }
    }
    if (others > 0) body.push(`<p class="others">${escapeHtml(othersLine(others))}</p>`);
    body.push('</section>');
  }
  // Everything inline: the page is opened from disk or an attachment, with no network.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #1f2937; }
code { font-family: ui-monospace, monospace; background: #f3f4f6; padding: 0 0.2em; border-radius: 3px; }
h2 { border-bottom: 1px solid #e5e7eb; padding-bottom: 0.2em; }
.others { color: #6b7280; }
</style>
</head>
<body>
${body.join('\n')}
</body>
</html>
`;
}

/** A detail quotes the contract (enum values, patterns): nothing in it may turn into markup. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]<>#|]/g, (char) => `\\${char}`);
}

export function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}

/** Writes changelog.md and changelog.html into `dir` from the releases and the working bundle; returns their paths. */
export async function writeChangelog(dir: string, repo: string = ROOT): Promise<string[]> {
  const working = workingBundle(repo);
  const sections = changelogSections(loadReleases(repo), (release) => releasedBundle(repo, release), working, loadAcceptedBreaks(repo), loadUnreleasedNotes(repo));
  const title = titleOf(working);
  const files: [string, string][] = [
    [join(dir, 'changelog.md'), renderMarkdown(sections, title)],
    [join(dir, 'changelog.html'), renderHtml(sections, title)],
  ];
  await mkdir(dir, { recursive: true });
  for (const [file, text] of files) await writeFile(file, text);
  return files.map(([file]) => file);
}
