// The clause matrix as Markdown: every clause of the service interface, who can observe
// it, the checks that prove it and how they came out in this run, with a legend of every
// column and mark; then, where the profile holds an implementation to them, the
// contract's decisions.
import { describeSpent } from '../budget.ts';
import type { Check } from '../check.ts';
import { CLAUSES } from '../clauses.ts';
import type { ProxyCheck } from '../proxy/check.ts';
import { PROXY_CHECKS } from '../proxy/index.ts';
import type { ReceiverCheck } from '../receiver-checks/check.ts';
import { RECEIVER_CHECKS } from '../receiver-checks/index.ts';
import { isOptional, isRequired } from '../selection.ts';
import { decisionMatrix } from './build.ts';
import type { Report } from './model.ts';
import { BOUND_MEANS, counted, MARKDOWN_RESULTS, markdownClauseLegend, OPTIONAL_MEANS } from './text.ts';

/** The profiles that judge the contract's decisions: only their reports list them. */
const DECIDING_PROFILES: readonly string[] = ['contract', 'mock'];

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function toMarkdown(report: Report): string {
  const lines = [
    report.subject === 'receiver' ? `# Receiver conformance report: ${report.baseUrl}` : report.subject === 'proxy' ? `# Proxy conformance report: ${report.baseUrl}` : `# Conformance report: ${report.baseUrl}`,
    '',
    report.subject === 'proxy'
      ? `The proxy passed the traffic of clients to ${report.baseUrl} (read through ${report.implementation}) and judged both sides: ${report.startedAt}, ${(report.durationMs / 1000).toFixed(1)} s, ${counted(report.requests, 'request')} and ${counted(report.deliveries, 'webhook')} seen. Verdict: **${report.verdict.toUpperCase()}**.`
      : report.subject === 'receiver'
      ? `The runner played the sender (${report.implementation}): ${report.startedAt}, ${(report.durationMs / 1000).toFixed(1)} s of at most ${report.boundSeconds ?? '?'} s, ${counted(report.deliveries, 'delivery', 'deliveries')}. Verdict: **${report.verdict.toUpperCase()}**.`
      : `Profile **${report.profile}**, implementation profile: ${report.implementation}, ${report.startedAt}, ${(report.durationMs / 1000).toFixed(1)} s, ${counted(report.requests, 'request')}. Verdict: **${report.verdict.toUpperCase()}**.`,
    '',
    ...(report.bound ? [`Bound: ${report.bound.seconds} s, stated before the first request: an upper limit and not an estimate, ${BOUND_MEANS}${report.bound.reached ? '; **reached**: the checks not finished by then are reported not run' : ''}.`, ''] : []),
    `${report.counts.passed} passed, ${report.counts.failed} failed, ${report.counts.skipped} skipped, ${report.counts.notApplicable} not applicable${report.counts.warned ? `; ${counted(report.counts.warned, 'warning')} (optional checks that found a flaw: they do not decide the verdict)` : ''}.`,
    '',
    ...(report.budget
      ? [`Budget, stated before the first request: ${report.budget.stated}${report.budget.maxCredits === undefined ? '' : ` (--max-credits ${report.budget.maxCredits})`}. Spent: ${report.budget.spent ? describeSpent(report.budget.spent) : 'not known (no balance shown, or no job started)'}.`, '']
      : []),
  ];
  if (report.abort) lines.push(`> ${report.abort.kind}: ${report.abort.message}`, '');
  if (report.setup?.length) lines.push('## Setup warnings', '', 'The run was set up in a way that explains results below: fix these first.', '', ...report.setup.map((warning) => `- ${warning}`), '');
  lines.push('## Clauses', '', markdownClauseLegend(), '', '| clause | observe | rule | checks | result |', '|---|---|---|---|---|');
  for (const row of report.clauses) {
    const checks = row.checks.length ? row.checks.map((id) => `\`${id}\``).join('<br>') : (row.provenBy ?? '');
    lines.push(`| ${row.id} | ${row.observe.join(', ')} | ${cell(row.rule)} | ${checks} | ${MARKDOWN_RESULTS[row.outcome]?.icon ?? row.outcome} |`);
  }
  // A receiver run is held to the source's receiver clauses; the contract's decisions are the service's.
  if (report.subject === undefined && DECIDING_PROFILES.includes(report.profile)) {
    lines.push('', '## Contract decisions', '', "Where the service interface leaves a choice open, this project's contract decides it; the contract profile holds an implementation to each decision through the checks named here, whose results are above and below.", '', '| decision | rule | checks |', '|---|---|---|');
    for (const row of decisionMatrix()) lines.push(`| ${row.id} | ${cell(row.rule)} | ${row.checks.map((id) => `\`${id}\``).join('<br>') || '(not observable in one run)'} |`);
  }
  const failure = (r: (typeof report.results)[number]) => {
    const f = r.failure!;
    lines.push(`### ${r.id} (${f.clause})`, '', f.message, '');
    if (f.expected) lines.push(`- expected: ${f.expected}`);
    if (f.received) lines.push(`- received: ${f.received}`);
    if (f.fix) lines.push(`- fix: ${f.fix}`);
    for (const ex of f.exchanges) lines.push('', '```', ex, '```');
    if (f.reproduction?.length) lines.push('', 'Reproduce (keys from the environment, as the runner reads them):', '', '```sh', ...f.reproduction, '```');
    lines.push('');
  };
  const failed = report.results.filter((r) => r.outcome === 'failed');
  if (failed.length) {
    lines.push('', '## Failures', '');
    failed.forEach(failure);
  }
  const warned = report.results.filter((r) => r.outcome === 'warned');
  const noted = report.results.filter((r) => r.warnings?.length);
  if (warned.length || noted.length) lines.push('', '## Warnings', '');
  if (warned.length) {
    lines.push(`An optional check ${OPTIONAL_MEANS}. What ${warned.length === 1 ? 'one' : counted(warned.length, 'optional check')} found:`, '');
    warned.forEach(failure);
  }
  if (noted.length) lines.push(...noted.flatMap((r) => r.warnings!.map((w) => `- \`${r.id}\`: ${w}`)));
  const skipped = report.results.filter((r) => r.outcome === 'skipped');
  if (skipped.length) {
    lines.push('', '## Skipped', '', ...skipped.map((r) => `- \`${r.id}\`${r.required ? ' (required)' : ''}: ${r.reason}`));
  }
  // What the proxy could not judge depends on the traffic it saw: the reason says what would have let it.
  const unjudged = report.subject === 'proxy' ? report.results.filter((r) => r.outcome === 'not_applicable') : [];
  if (unjudged.length) lines.push('', '## Not judged', '', ...unjudged.map((r) => `- \`${r.id}\`: ${r.reason}`));
  return `${lines.join('\n')}\n`;
}

/**
 * For --list: per clause, what each check that proves it asserts (what "holds" means
 * when observed from outside); then which checks prove which clause and decision, and
 * each check's profiles.
 */
export function listMatrix(checks: readonly Check[], receiverChecks: readonly ReceiverCheck[] = RECEIVER_CHECKS, proxyChecks: readonly ProxyCheck[] = PROXY_CHECKS): string {
  const lines = [
    '# What each check asserts, by clause',
    '',
    'After each clause ID, who can see the rule hold: B a client over HTTP, as this runner; W only the implementation\'s own tests; C clients and webhook receivers (the typed client\'s tests prove them); R a webhook receiver, judged by this runner\'s receiver mode; P a client, judged from its live traffic by this runner\'s proxy mode.',
    '',
  ];
  const judgingReceivers = (id: string) => receiverChecks.filter((c) => (c.clauses as readonly string[]).includes(id));
  // The proxy's client checks name the clauses a client is held to; its service checks repeat a run's passively.
  const judgingClients = (id: string) => proxyChecks.filter((c) => c.party === 'client' && (c.clauses as readonly string[]).includes(id));
  for (const clause of CLAUSES) {
    lines.push(`## ${clause.id} (${clause.observe.join(', ')}): ${clause.rule}`, '');
    const proving = checks.filter((c) => (c.clauses as readonly string[]).includes(clause.id));
    const receiving = judgingReceivers(clause.id);
    if (proving.length === 0) lines.push('provenBy' in clause ? `Not observable in a service run; the client proves it in ${clause.provenBy}.` : 'No check observes it.');
    for (const check of proving) lines.push(`- \`${check.id}\`: ${check.asserts}`);
    if (receiving.length > 0) lines.push('', 'A receiver run (`receiver --url …`) judges a webhook receiver for it:');
    for (const check of receiving) lines.push(`- \`${check.id}\`: ${check.asserts}`);
    const clients = judgingClients(clause.id);
    if (clients.length > 0) lines.push('', 'A proxy run (`proxy --upstream …`) judges a client for it from its live traffic:');
    for (const check of clients) lines.push(`- \`${check.id}\`: ${check.asserts}`);
    lines.push('');
  }
  lines.push('## Contract decisions (contract profile only)', '');
  for (const check of checks.filter((c) => c.clauses.length === 0)) lines.push(`- \`${check.id}\` (${(check.decisions ?? []).join(', ')}): ${check.asserts}`);
  lines.push('', '# Matrices', '', '| clause | observe | checks |', '|---|---|---|');
  for (const clause of CLAUSES) {
    const ids = checks.filter((c) => (c.clauses as readonly string[]).includes(clause.id)).map((c) => c.id);
    const receiving = judgingReceivers(clause.id).map((c) => c.id);
    const proven = 'provenBy' in clause ? `(client: ${clause.provenBy})` : '(none)';
    const clients = judgingClients(clause.id).map((c) => c.id);
    lines.push(`| ${clause.id} | ${clause.observe.join(', ')} | ${[ids.length ? ids.join(', ') : proven, ...(receiving.length ? [`receiver mode: ${receiving.join(', ')}`] : []), ...(clients.length ? [`proxy mode: ${clients.join(', ')}`] : [])].join('; ')} |`);
  }
  lines.push('', '| decision | rule | checks |', '|---|---|---|');
  for (const row of decisionMatrix()) lines.push(`| ${row.id} | ${cell(row.rule)} | ${row.checks.join(', ') || '(not observable in one run)'} |`);
  lines.push('', `In each profile a check is required (it must run and pass), optional (it ${OPTIONAL_MEANS}) or judged if it runs (it needs a sandbox clock, or judges what the implementation may not have: not running fails nothing, a failure fails the verdict).`);
  lines.push('', '| check | phase | clauses | decisions | core | contract | production | mock |', '|---|---|---|---|---|---|---|---|');
  for (const check of checks) {
    const mark = (profile: 'core' | 'contract' | 'production' | 'mock') => (!check.profiles.includes(profile) ? '' : isRequired(check, { profile }) ? 'required' : isOptional(check, { profile }) ? 'optional' : 'if it runs');
    lines.push(`| ${check.id} | ${check.phase ?? 'main'} | ${check.clauses.join(', ')} | ${(check.decisions ?? []).join(', ')} | ${mark('core')} | ${mark('contract')} | ${mark('production')} | ${mark('mock')} |`);
  }
  return `${lines.join('\n')}\n`;
}
