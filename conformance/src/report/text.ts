// Words the console and the Markdown report share: a count with its noun in the right
// number, and the legends of the marks and columns they print, so that a first reader
// needs no other document to read a report.

/** `1 check`, `2 checks`. */
export function counted(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}

/** What the console's marks mean; every mark it prints is here. */
export const CONSOLE_MARKS = { passed: '✓', failed: '✗', warned: '!', skipped: '-', not_applicable: '·' } as const;

/** What `[optional]` means, in every report that marks a check so. */
export const OPTIONAL_MEANS = 'runs and is shown, but never decides the verdict: a flaw it finds is a warning';

export function consoleLegend(): string {
  return [
    `${CONSOLE_MARKS.passed} passed  ${CONSOLE_MARKS.failed} failed  ${CONSOLE_MARKS.warned} warning (an optional check found a flaw)  ${CONSOLE_MARKS.skipped} skipped (did not run; a required one fails the verdict, one marked [not required] does not)  ${CONSOLE_MARKS.not_applicable} not applicable to this profile or implementation`,
    `[optional] ${OPTIONAL_MEANS}; the verdict fails on ${CONSOLE_MARKS.failed} and on a required check that did not run, never on ${CONSOLE_MARKS.warned}`,
    'AV-…, CR-…, RL-…, WH-…: clause IDs of the service interface, and ND-…: this project\'s own decisions; --list prints each one\'s rule and what its checks assert',
  ].join('\n');
}

/**
 * What a service run's bound ("ends within N s") is, wherever it is printed: the start
 * line, the reports and --help say the same.
 */
export const BOUND_MEANS = "the time a correct implementation with the implementation profile's timings needs at most, end to end (its jobs and webhooks at their longest, rate-limit windows moved over or waited out); the run stops there and reports the checks it had not finished as not run";

/** The result column of the Markdown clause table. */
export const MARKDOWN_RESULTS: Record<string, { icon: string; means: string }> = {
  passed: { icon: '✅ passed', means: 'every check that proves it passed' },
  failed: { icon: '❌ failed', means: 'a check broke it' },
  warned: { icon: '⚠️ warning', means: 'only an optional check saw it broken, which does not decide the verdict (the Warnings section says what it saw)' },
  skipped: { icon: '⏭️ skipped', means: 'its checks did not run (the Skipped section says why)' },
  not_proven: { icon: '⏸️ not proven', means: 'its check ran but failed first on another of its clauses, so this one was not reached (the Failures section names that clause)' },
  not_applicable: { icon: '· n/a', means: 'none of its checks was part of this run (not in this profile, or left out by --only or --skip)' },
  uncovered: { icon: '❗ no check', means: 'a client over HTTP could see it, but no check proves it' },
  client: { icon: '🧩 client', means: 'only clients and receivers can act on it; the test named under checks proves the typed client does' },
};

export function markdownClauseLegend(): string {
  const results = Object.values(MARKDOWN_RESULTS).map(({ icon, means }) => `${icon}: ${means}`).join('; ');
  return [
    'Each clause of the service interface this runner knows, its rule quoted in this project\'s words (the runner\'s `--list` prints the same rules with what each check asserts).',
    '',
    '- **clause**: the clause ID; failures below name it.',
    '- **observe**: who can see the rule hold. **B**: a client over HTTP, as this runner; **W**: only the implementation\'s own tests (its clock, its database); **C**: clients and webhook receivers, which must act on it; **R**: a webhook receiver, which the receiver mode (`receiver --url …`) judges; **P**: a client, which the proxy mode (`proxy --upstream …`) judges from its live traffic.',
    '- **rule**: what the clause requires.',
    '- **checks**: the checks of this runner that prove it, or for a C clause the client test that does.',
    `- **result**: how its checks came out in this run. ${results}.`,
  ].join('\n');
}
