// The contract's changelog, for client developers: what changed release by release,
// newest first, and what is waiting for the next release. It is the breaking-change
// gate's own diff (compatibility.ts) written out, so the two can never disagree.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compareDocuments, type Change } from './compatibility.ts';
import { ROOT, loadReleases, releasedBundle, workingBundle, type Release } from './releases.ts';

type Json = Record<string, unknown>;

export const FIRST_RELEASE_NOTES = 'First release of /v1.';

export interface ChangelogSection {
  heading: string;
  /** The release's notes, or what the section compares. */
  intro: string;
  changes: Change[];
}

/**
 * One section per release, newest first, and "Unreleased" on top: the working bundle
 * against the last release. `bundleOf` reads a release's bundle.
 */
export function changelogSections(releases: Release[], bundleOf: (release: Release) => Json, working: Json): ChangelogSection[] {
  const last = releases.at(-1);
  const pending = last ? compareDocuments(bundleOf(last), working) : [];
  const intro = !last ? 'No release is recorded yet (openapi/releases.json).' : pending.length ? `Changes since ${last.version}, not yet released.` : `No changes since ${last.version}.`;
  const unreleased: ChangelogSection = { heading: 'Unreleased', intro, changes: pending };
  const released = releases.map((release, i): ChangelogSection => {
    const previous = releases[i - 1];
    const heading = `${release.version} (${release.date})`;
    if (!previous) return { heading, intro: release.notes || FIRST_RELEASE_NOTES, changes: [] };
    return { heading, intro: release.notes, changes: compareDocuments(bundleOf(previous), bundleOf(release)) };
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

interface Block {
  title: string;
  entries: Entry[];
}

/** Breaking first, then additive; the rest only counted. */
function blocks(section: ChangelogSection): { blocks: Block[]; others: number } {
  const of = (kind: Change['kind']) => section.changes.filter((change) => change.kind === kind);
  const list = [
    { title: 'Breaking changes', entries: entries(of('breaking')) },
    { title: 'Additive changes', entries: entries(of('additive')) },
  ].filter((block) => block.entries.length > 0);
  return { blocks: list, others: of('other').length };
}

function othersLine(count: number): string {
  return `${count} other change${count === 1 ? '' : 's'} that clients do not see (descriptions, examples, component names, paths outside /v1).`;
}

function titleOf(working: Json): string {
  const title = (working.info as Json | undefined)?.title;
  return `Changelog: ${typeof title === 'string' ? title : 'the API'}`;
}

const PREAMBLE =
  'What changed in the contract, for client developers, newest first. Within /v1 only additive changes are made (new optional request members, new response members, new error codes, new event types); anything else ships as /v2. Clients should ignore response members they do not know.';

export function renderMarkdown(sections: ChangelogSection[], title: string): string {
  const code = (text: string) => `\`${text.replaceAll('`', "'")}\``;
  const line = (entry: Entry) => {
    const what = `${entry.rule}${entry.detail ? ` (${escapeMarkdown(entry.detail)})` : ''}`;
    const where = entry.locations.map(code).join(', ');
    return entry.member === undefined ? `- ${where}: ${what}` : `- ${code(entry.member)}: ${what}, in ${where}`;
  };
  const out = [`# ${title}`, '', PREAMBLE, ''];
  for (const section of sections) {
    out.push(`## ${section.heading}`, '', section.intro, '');
    const { blocks: list, others } = blocks(section);
    for (const block of list) out.push(`### ${block.title}`, '', ...block.entries.map(line), '');
    if (others > 0) out.push(othersLine(others), '');
  }
  return out.join('\n');
}

export function renderHtml(sections: ChangelogSection[], title: string): string {
  const code = (text: string) => `<code>${escapeHtml(text)}</code>`;
  const item = (entry: Entry) => {
    const what = escapeHtml(`${entry.rule}${entry.detail ? ` (${entry.detail})` : ''}`);
    const where = entry.locations.map(code).join(', ');
    return `<li>${entry.member === undefined ? `${where}: ${what}` : `${code(entry.member)}: ${what}, in ${where}`}</li>`;
  };
  const body: string[] = [`<h1>${escapeHtml(title)}</h1>`, `<p>${escapeHtml(PREAMBLE)}</p>`];
  for (const section of sections) {
    body.push(`<section>`, `<h2>${escapeHtml(section.heading)}</h2>`, `<p>${escapeHtml(section.intro)}</p>`);
    const { blocks: list, others } = blocks(section);
    for (const block of list) body.push(`<h3>${escapeHtml(block.title)}</h3>`, '<ul>', ...block.entries.map(item), '</ul>');
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
  const sections = changelogSections(loadReleases(repo), (release) => releasedBundle(repo, release), working);
  const title = titleOf(working);
  const files: [string, string][] = [
    [join(dir, 'changelog.md'), renderMarkdown(sections, title)],
    [join(dir, 'changelog.html'), renderHtml(sections, title)],
  ];
  await mkdir(dir, { recursive: true });
  for (const [file, text] of files) await writeFile(file, text);
  return files.map(([file]) => file);
}
