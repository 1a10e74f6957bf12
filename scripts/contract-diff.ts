// `npm run contract:diff`: the breaking-change gate of the contract. Compares a base (by
// default the last release, its bundle as kept in openapi/releases/, so no git history is
// needed) with openapi/ as the working tree has it now,
// bundled afresh (an edit not yet regenerated into generated/ is judged all the same), or
// with the bundle at another ref; prints every change by kind, and fails when a change
// inside /v1 breaks a client.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { compareDocuments, markAccepted, type Change, type ChangeKind } from '../contract/compatibility.ts';
import { ACCEPTED_BREAKS_FILE, BUNDLE_FILE, HistoryError, RELEASED_BUNDLES_DIR, RELEASES_FILE, ROOT, bundleAt, commitOf, loadAcceptedBreaks, loadReleases, releasedBundle, releasedBundleFile, workingBundle, type Release } from '../contract/releases.ts';
import { callsFromHar, formatImpacts, judgeAgainstTraffic, TrafficError } from '../contract/traffic.ts';
import { BundleError, bundleContract } from './bundle.ts';

const EXIT_BREAKING = 1;
const EXIT_USAGE = 2;

const HELP = `Usage: npm run contract:diff -- [--base <release or ref>] [--head <ref>] [--repo <dir>] [--traffic <file.har>] [--json]

Compares the bundle of a release, or ${BUNDLE_FILE} at a git ref, with
openapi/ as the working tree has it, bundled now as npm run generate does (or
with ${BUNDLE_FILE} at --head's),
and prints every change, grouped as breaking, additive and other. Within /v1 only
additive changes are allowed (ND-COMPAT in openapi/README.md); paths outside /v1
are reported as other. The rules are written down in contract/compatibility.ts.

  --base <release or ref>
                 a version recorded in ${RELEASES_FILE} (its bundle kept in
                 ${RELEASED_BUNDLES_DIR}/<version>.json; no git needed) or a git
                 ref. Default: the last release.
  --head <ref>   compare with the bundle at this git ref instead of the working tree.
                 A repository without redocly.yaml has its ${BUNDLE_FILE} compared.
  --repo <dir>   the repository (default: this one).
  --traffic <file.har>
                 judge each breaking change against the calls clients made: a HAR
                 file (the runner's, the proxy's or a receiver run's --report-har, or
                 a browser's export). Lists, per breaking change, the observed calls
                 it would break (method, path template, status, the member involved,
                 how many times seen), or says that it touches nothing observed.
                 The exit status is the same: a change that touches nothing observed
                 still breaks a client whose calls this traffic does not hold.
  --json         print {base, head, changes} as JSON (with --traffic, also traffic).
  --help         this text.

Releases: the releases of the contract are recorded in ${RELEASES_FILE},
oldest first, as {version, commit, date, notes}: version is the document's
info.version at that commit, commit is the full SHA of a commit on main. Each
release's bundle is kept in ${RELEASED_BUNDLES_DIR}/<version>.json, made once
from that commit and never edited (${RELEASED_BUNDLES_DIR}/README.md). To
release, append an entry and keep its bundle.

A breaking change a person judged to break no client (most often a rule the
service already kept, now stated in a schema) is recorded in
${ACCEPTED_BREAKS_FILE} as {rule, where: [...], date, reason, action?}; it is
printed as accepted, with its reason, and does not fail the comparison.

Exit status: 0 no breaking change, 1 a breaking change inside /v1, 2 no
comparison made (an unknown option or ref, a ref a shallow clone lacks, no
bundle at a ref or kept for a release, an openapi/ that does not bundle).`;

const KINDS: { kind: ChangeKind; heading: string }[] = [
  { kind: 'breaking', heading: 'Breaking' },
  { kind: 'additive', heading: 'Additive' },
  { kind: 'other', heading: 'Other (not visible to clients, or outside /v1)' },
];

interface Side {
  ref: string;
  label: string;
  commit?: string;
  /** The file a release's bundle is kept in. */
  file?: string;
}

export function formatChanges(changes: Change[]): string {
  const lines: string[] = [];
  const line = (change: Change) => `  ${change.where} — ${change.rule}${change.detail ? ` (${change.detail})` : ''}`;
  for (const { kind, heading } of KINDS) {
    const ofKind = changes.filter((change) => change.kind === kind && change.accepted === undefined);
    if (ofKind.length === 0) continue;
    lines.push(`${heading} (${ofKind.length}):`);
    for (const change of ofKind) lines.push(line(change));
    lines.push('');
  }
  const accepted = changes.filter((change) => change.accepted !== undefined);
  if (accepted.length > 0) {
    lines.push(`Breaking, accepted in ${ACCEPTED_BREAKS_FILE} (${accepted.length}):`);
    for (const reason of new Set(accepted.map((change) => change.accepted))) {
      const group = accepted.filter((c) => c.accepted === reason);
      for (const change of group) lines.push(line(change));
      lines.push(`    accepted: ${reason}`);
      if (group[0]!.action !== undefined) lines.push(`    a client: ${group[0]!.action}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

/**
 * `release 1.0.0 (openapi/releases/1.0.0.json, from b5acd5742d07)`, `generated/openapi.json
 * at main~5 (…)` or at the short SHA alone when that is what was given, or the working tree.
 */
function describe(side: Side, where: string): string {
  if (side.commit === undefined) return side.label;
  const short = side.commit.slice(0, 12);
  if (side.file !== undefined) return `${side.label} (${side.file}, from ${short})`;
  return side.commit.startsWith(side.label) ? `${where} at ${short}` : `${where} at ${side.label} (${short})`;
}

function releaseSide(repo: string, release: Release): { side: Side; bundle: Record<string, unknown> } {
  return { side: { ref: release.version, label: `release ${release.version}`, commit: release.commit, file: releasedBundleFile(release) }, bundle: releasedBundle(repo, release) };
}

/** The base: a recorded release (the last by default), read from its kept bundle, or a git ref. */
function baseOf(repo: string, asked: string | undefined): { side: Side; bundle: Record<string, unknown> } {
  const releases = loadReleases(repo);
  if (asked === undefined) {
    const last = releases.at(-1);
    if (!last) throw new HistoryError(`no release is recorded in ${RELEASES_FILE} to compare with: give --base <ref>`);
    return releaseSide(repo, last);
  }
  const release = releases.find((r) => r.version === asked);
  if (release) return releaseSide(repo, release);
  const commit = commitOf(repo, asked);
  return { side: { ref: asked, label: asked, commit }, bundle: bundleAt(repo, commit) };
}

function main(argv: string[]): number {
  const { values } = parseArgs({
    args: argv,
    options: { base: { type: 'string' }, head: { type: 'string' }, repo: { type: 'string' }, traffic: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const repo = resolve(values.repo ?? ROOT);
  const { side: base, bundle: baseBundle } = baseOf(repo, values.base);
  // The working tree is judged by its source, not by a bundle that may predate the last edit.
  const fromSource = values.head === undefined && existsSync(join(repo, 'redocly.yaml'));
  const head: Side =
    values.head !== undefined
      ? { ref: values.head, label: values.head, commit: commitOf(repo, values.head) }
      : { ref: 'working tree', label: fromSource ? "the working tree's openapi/, bundled now" : `the working tree's ${BUNDLE_FILE}` };
  const headBundle = head.commit !== undefined ? bundleAt(repo, head.commit) : fromSource ? (JSON.parse(bundleContract(repo)) as Record<string, unknown>) : workingBundle(repo);

  const changes = markAccepted(compareDocuments(baseBundle, headBundle), loadAcceptedBreaks(repo));
  const breaking = changes.filter((change) => change.kind === 'breaking' && change.accepted === undefined).length;
  const accepted = changes.filter((change) => change.accepted !== undefined).length;
  const judged = values.traffic === undefined ? undefined : judgeTraffic(values.traffic, changes, Object.keys((baseBundle.paths ?? {}) as object));
  if (values.json) {
    console.log(JSON.stringify({ base, head, changes, ...(judged ? { traffic: { file: values.traffic, calls: judged.calls, impacts: judged.impacts.map(({ change, ...rest }) => ({ where: change.where, rule: change.rule, ...rest })) } } : {}) }, null, 2));
  } else {
    const where = repo === ROOT ? BUNDLE_FILE : join(repo, BUNDLE_FILE);
    console.log(`Comparing ${describe(base, where)} with ${describe(head, where)}.\n`);
    if (changes.length > 0) console.log(formatChanges(changes));
    console.log(
      breaking > 0
        ? `${breaking} breaking change${breaking === 1 ? '' : 's'} inside /v1: within /v1 only additive changes are allowed (ND-COMPAT); make it additive or ship it as /v2.`
        : `No breaking change${accepted > 0 ? ` but the ${accepted} accepted in ${ACCEPTED_BREAKS_FILE}` : ''} (${changes.length} change${changes.length === 1 ? '' : 's'} in all).`,
    );
    if (judged) console.log(`\n${formatImpacts(judged.impacts, judged.calls, values.traffic!)}`);
  }
  return breaking > 0 ? EXIT_BREAKING : 0;
}

/** The breaking changes judged against a HAR file's calls, matched to the base's paths (the traffic was made against it). */
export function judgeTraffic(file: string, changes: Change[], templates: string[]) {
  let har: unknown;
  try {
    har = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new TrafficError(`cannot read --traffic ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const calls = callsFromHar(har, templates);
  return { calls: calls.length, impacts: judgeAgainstTraffic(changes, calls) };
}

if (import.meta.main) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error) {
    // A usage error is one line, without a stack: an unknown option or ref, a ref a
    // shallow clone lacks, a ref or release with no bundle, a malformed releases file, a
    // contract that does not bundle. Anything else is a bug, shown with its stack; neither may pass for a verdict.
    const usage = (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true;
    if (usage || error instanceof HistoryError || error instanceof BundleError || error instanceof TrafficError) console.error(`contract:diff: ${(error as Error).message}${usage ? ' (see --help)' : ''}`);
    else console.error(error);
    process.exitCode = EXIT_USAGE;
  }
}
