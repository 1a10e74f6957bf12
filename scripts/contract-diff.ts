// `npm run contract:diff`: the breaking-change gate of the contract. Compares the bundle
// at a base (by default the last release) with openapi/ as the working tree has it now,
// bundled afresh (an edit not yet regenerated into generated/ is judged all the same), or
// with the bundle at another ref; prints every change by kind, and fails when a change
// inside /v1 breaks a client.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { compareDocuments, markAccepted, type Change, type ChangeKind } from '../contract/compatibility.ts';
import { ACCEPTED_BREAKS_FILE, BUNDLE_FILE, HistoryError, RELEASES_FILE, ROOT, bundleAt, commitOf, defaultBase, loadAcceptedBreaks, workingBundle } from '../contract/releases.ts';
import { BundleError, bundleContract } from './bundle.ts';

const EXIT_BREAKING = 1;
const EXIT_USAGE = 2;

const HELP = `Usage: npm run contract:diff -- [--base <ref>] [--head <ref>] [--repo <dir>] [--json]

Compares ${BUNDLE_FILE} at --base with openapi/ as the working tree has it,
bundled now as npm run generate does (or with ${BUNDLE_FILE} at --head's),
and prints every change, grouped as breaking, additive and other. Within /v1 only
additive changes are allowed (ND-COMPAT in openapi/README.md); paths outside /v1
are reported as other. The rules are written down in contract/compatibility.ts.

  --base <ref>   the git ref to compare against. Default: the last release in
                 ${RELEASES_FILE}; before the first release, the commit
                 that added ${BUNDLE_FILE}.
  --head <ref>   compare with the bundle at this ref instead of the working tree.
                 A repository without redocly.yaml has its ${BUNDLE_FILE} compared.
  --repo <dir>   the git repository (default: this one).
  --json         print {base, head, changes} as JSON.
  --help         this text.

Releases: git tags do not travel with every clone, so the releases of the
contract are recorded in ${RELEASES_FILE}, oldest first, as
{version, commit, date, notes}: version is the document's info.version at that
commit, commit is the full SHA of a commit on main. To release, append an entry.

A breaking change a person judged to break no client (most often a rule the
service already kept, now stated in a schema) is recorded in
${ACCEPTED_BREAKS_FILE} as {rule, where: [...], date, reason}; it is
printed as accepted, with its reason, and does not fail the comparison.

Exit status: 0 no breaking change, 1 a breaking change inside /v1, 2 no
comparison made (an unknown option or ref, a shallow clone, no bundle at a ref,
an openapi/ that does not bundle).`;

const KINDS: { kind: ChangeKind; heading: string }[] = [
  { kind: 'breaking', heading: 'Breaking' },
  { kind: 'additive', heading: 'Additive' },
  { kind: 'other', heading: 'Other (not visible to clients, or outside /v1)' },
];

interface Side {
  ref: string;
  label: string;
  commit?: string;
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
      for (const change of accepted.filter((c) => c.accepted === reason)) lines.push(line(change));
      lines.push(`    accepted: ${reason}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** `release 1.0.0 (b5acd5742d07)`, `main (…)`, or the short SHA alone when that is what was given. */
function describe(side: Side): string {
  if (side.commit === undefined) return side.label;
  const short = side.commit.slice(0, 12);
  return side.commit.startsWith(side.label) ? short : `${side.label} (${short})`;
}

function main(argv: string[]): number {
  const { values } = parseArgs({
    args: argv,
    options: { base: { type: 'string' }, head: { type: 'string' }, repo: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const repo = resolve(values.repo ?? ROOT);
  const base: Side = values.base === undefined ? defaultBase(repo) : { ref: values.base, label: values.base };
  base.commit = commitOf(repo, base.ref);
  // The working tree is judged by its source, not by a bundle that may predate the last edit.
  const fromSource = values.head === undefined && existsSync(join(repo, 'redocly.yaml'));
  const head: Side =
    values.head !== undefined
      ? { ref: values.head, label: values.head, commit: commitOf(repo, values.head) }
      : { ref: 'working tree', label: fromSource ? "the working tree's openapi/, bundled now" : `the working tree's ${BUNDLE_FILE}` };
  const baseBundle = bundleAt(repo, base.commit);
  const headBundle = head.commit !== undefined ? bundleAt(repo, head.commit) : fromSource ? (JSON.parse(bundleContract(repo)) as Record<string, unknown>) : workingBundle(repo);

  const changes = markAccepted(compareDocuments(baseBundle, headBundle), loadAcceptedBreaks(repo));
  const breaking = changes.filter((change) => change.kind === 'breaking' && change.accepted === undefined).length;
  const accepted = changes.filter((change) => change.accepted !== undefined).length;
  if (values.json) {
    console.log(JSON.stringify({ base, head, changes }, null, 2));
  } else {
    const where = repo === ROOT ? BUNDLE_FILE : join(repo, BUNDLE_FILE);
    console.log(`Comparing ${where} at ${describe(base)} with ${describe(head)}.\n`);
    if (changes.length > 0) console.log(formatChanges(changes));
    console.log(
      breaking > 0
        ? `${breaking} breaking change${breaking === 1 ? '' : 's'} inside /v1: within /v1 only additive changes are allowed (ND-COMPAT); make it additive or ship it as /v2.`
        : `No breaking change${accepted > 0 ? ` but the ${accepted} accepted in ${ACCEPTED_BREAKS_FILE}` : ''} (${changes.length} change${changes.length === 1 ? '' : 's'} in all).`,
    );
  }
  return breaking > 0 ? EXIT_BREAKING : 0;
}

if (import.meta.main) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error) {
    // A usage error is one line, without a stack: an unknown option or ref, a shallow
    // clone, a ref with no bundle, a malformed releases file, a contract that does not
    // bundle. Anything else is a bug, shown with its stack; neither may pass for a verdict.
    const usage = (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true;
    if (usage || error instanceof HistoryError || error instanceof BundleError) console.error(`contract:diff: ${(error as Error).message}${usage ? ' (see --help)' : ''}`);
    else console.error(error);
    process.exitCode = EXIT_USAGE;
  }
}
