// The report as one self-contained HTML page: no script, no font, no link to anything,
// so it opens from disk, offline, in any browser, and a CI artifact shows the same page a
// year later. The pictures are inline SVG drawn here from the run's observations
// (observe/timeline.ts): three kinds of chart with a handful of marks each do not need a
// charting library's few hundred kilobytes inlined into every report, nor its script.
import { describeSpent } from '../budget.ts';
import type { JobSeen, Observations, RemainingSeen, WebhookAttemptsSeen } from '../observe/timeline.ts';
import type { CheckResult, Report } from './model.ts';
import { BOUND_MEANS, counted, MARKDOWN_RESULTS, OPTIONAL_MEANS } from './text.ts';

const COLORS: Record<string, string> = {
  passed: '#2e7d32',
  failed: '#c62828',
  warned: '#ad1457',
  skipped: '#ef6c00',
  not_proven: '#ffb74d',
  not_applicable: '#9e9e9e',
  // What the run provoked on purpose (a webhook it refused to see the retry, a job it
  // failed with the failure marker, a window it used up to see a 429): the behaviour a
  // check asked for, never a flaw.
  intended: '#78909c',
  uncovered: '#6a1b9a',
  client: '#1565c0',
};

const OUTCOME_WORDS: Record<string, string> = {
  passed: 'passed',
  failed: 'failed',
  warned: 'warning (optional: does not decide the verdict)',
  skipped: 'skipped',
  not_proven: 'not proven (its check failed first on another clause)',
  not_applicable: 'not applicable',
  uncovered: 'no check could see it',
  client: 'proven on the client',
};

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * The reports' exchanges are masked where they are made (report/build.ts); a page that is
 * passed around is masked once more, whatever a future excerpt might show: the value of an
 * Authorization header, and anything shaped like an API key or a signing secret.
 */
export function maskSecrets(text: string): string {
  return text
    .replace(/^([<>]?\s*authorization:\s*)(\S+\s+)?\S+.*$/gim, (_m, name: string, scheme: string | undefined) => `${name}${scheme ?? ''}…(masked)`)
    .replace(/\b(sk_(?:test|live)_|whsec_)(?!…)[A-Za-z0-9+/=_-]{4,}/g, '$1…(masked)');
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#212121;max-width:1400px}
h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.verdict{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:600}
.pass{background:${COLORS.passed}}.fail{background:${COLORS.failed}}.aborted{background:${COLORS.skipped}}
table{border-collapse:collapse}td,th{border:1px solid #e0e0e0;padding:3px 6px;vertical-align:top;text-align:left}
.matrix th.check{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:400;font-size:11px;white-space:nowrap;padding:4px 2px}
.matrix td.cell{width:14px;height:14px;padding:0}.matrix td.rule{font-size:12px;max-width:420px}
.legend span{display:inline-block;margin-right:14px}.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px;margin-right:4px}
pre{background:#f5f5f5;padding:8px;overflow-x:auto;font-size:12px;margin:6px 0}
details{margin:2px 0}summary{cursor:pointer}.muted{color:#757575}
figure{margin:12px 0}figcaption{font-size:13px;color:#424242;margin-bottom:4px}
svg text{font:11px system-ui,sans-serif;fill:#424242}
`;

export function toHtml(report: Report): string {
  const title = report.subject === 'receiver' ? `Receiver conformance report: ${report.baseUrl}` : report.subject === 'proxy' ? `Proxy conformance report: ${report.baseUrl}` : `Conformance report: ${report.baseUrl}`;
  const body = [
    `<h1>${esc(title)}</h1>`,
    summaryHtml(report),
    '<h2 id="matrix">Clauses and the checks that prove them</h2>',
    matrixHtml(report),
    '<h2 id="checks">Checks</h2>',
    checksHtml(report),
    '<h2 id="pictures">What the run saw</h2>',
    picturesHtml(report.observations),
  ].join('\n');
  return `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head>\n<body>\n${body}\n</body></html>\n`;
}

function summaryHtml(report: Report): string {
  // A receiver or proxy run judges one party by the source's rules alone: it has no profile.
  const judged =
    report.subject === 'receiver'
      ? `the runner played the sender (${esc(report.implementation)}) against this receiver`
      : report.subject === 'proxy'
        ? `traffic read through <b>${esc(report.implementation)}</b>`
        : `profile <b>${esc(report.profile)}</b>, implementation profile <b>${esc(report.implementation)}</b>`;
  const bound = report.bound?.seconds ?? report.boundSeconds;
  const { counts } = report;
  const lines = [
    `<p><span class="verdict ${report.verdict}" data-verdict="${report.verdict}">${report.verdict.toUpperCase()}</span> ${judged}</p>`,
    `<p>${esc(report.startedAt)}, took ${(report.durationMs / 1000).toFixed(1)} s, ${esc(report.subject === 'receiver' ? counted(report.deliveries, 'delivery', 'deliveries') + ' sent' : `${counted(report.requests, 'request')}, ${counted(report.deliveries, 'webhook')} received`)}.</p>`,
    ...(bound === undefined ? [] : [`<p id="bound">Bound: ${bound} s, stated before the first ${report.subject === 'receiver' ? 'delivery' : 'request'}: ${esc(boundMeans(report))}${report.bound?.reached ? ' <b>Reached</b>: the checks not finished by then are reported not run.' : ''}</p>`]),
    `<p id="counts">Checks: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped, ${counts.notApplicable} not applicable${counts.requiredNotRun ? `; ${counts.requiredNotRun} required not run` : ''}${counts.warned ? `; <span id="warnings" style="color:${COLORS.warned}">${esc(counted(counts.warned, 'warning'))}</span> (optional checks that found a flaw: they do not decide the verdict)` : ''}.${clauseTally(report)}</p>`,
    `<p class="muted">[optional]: ${esc(OPTIONAL_MEANS)}.</p>`,
  ];
  if (report.abort) lines.push(`<p><b>${esc(report.abort.kind)}</b>: ${esc(maskSecrets(report.abort.message))}</p>`);
  if (report.setup?.length) lines.push(`<h2>Setup warnings</h2><ul>${report.setup.map((warning) => `<li>${esc(maskSecrets(warning))}</li>`).join('')}</ul>`);
  if (report.budget) {
    const { budget } = report;
    const spent = budget.spent ? ` Spent: <b>${budget.spent.credits}</b> ${esc(describeSpent(budget.spent).replace(/^\d+ /, ''))}.` : ' Spent: not known (the implementation shows no balance, or the run started no job).';
    lines.push(`<p id="budget">Budget, stated before the first request: ${esc(budget.stated)}${budget.maxCredits === undefined ? '' : `; --max-credits ${budget.maxCredits}`}.${spent}</p>`);
  }
  return lines.join('\n');
}

/** What the stated bound is, in the words of the runner's --help. */
function boundMeans(report: Report): string {
  if (report.subject === 'receiver') return 'an upper limit and not an estimate: each delivery answered within its time limit or counted unanswered, and a little room per check.';
  return `an upper limit and not an estimate (a quick implementation takes a fraction of it): ${BOUND_MEANS}.`;
}

/** The clause rows by outcome, so that a clause not proven never reads as a skipped check. */
function clauseTally(report: Report): string {
  const rows = report.clauses.filter((row) => row.checks.length > 0 && row.outcome !== 'not_applicable');
  if (rows.length === 0) return '';
  const by = (outcome: string) => rows.filter((row) => row.outcome === outcome).length;
  const parts = [
    [by('passed'), 'held'],
    [by('failed'), 'broken'],
    [by('warned'), 'with a warning'],
    [by('not_proven'), 'not proven (a check failed first on another clause)'],
    [by('skipped'), 'not run'],
  ].filter(([n]) => (n as number) > 0);
  return ` Clauses: ${parts.map(([n, words]) => `${n} ${words}`).join(', ')}.`;
}

function legend(keys: readonly string[]): string {
  return `<p class="legend">${keys.map((key) => `<span><i class="swatch" style="background:${COLORS[key]}"></i>${esc(OUTCOME_WORDS[key] ?? key)}</span>`).join('')}</p>`;
}

function matrixHtml(report: Report): string {
  const byId = new Map(report.results.map((r) => [r.id, r]));
  // Every check that proves a clause, in the run's order; those of the registry this run did not select last.
  const columns = [...new Set([...report.results.filter((r) => r.clauses.length > 0).map((r) => r.id), ...report.clauses.flatMap((row) => row.checks)])];
  const head = `<tr><th>clause</th><th>rule</th><th>result</th>${columns.map((id) => `<th class="check" title="${esc(byId.get(id)?.title ?? id)}">${esc(id)}</th>`).join('')}</tr>`;
  const rows = report.clauses.map((row) => {
    const cells = columns.map((id) => {
      if (!row.checks.includes(id)) return '<td class="cell"></td>';
      // How the check came out for this clause: a check that failed on another clause first did not prove this one.
      const outcome = row.cells?.[id] ?? byId.get(id)?.outcome ?? 'not_applicable';
      return `<td class="cell" data-outcome="${outcome}" title="${esc(`${id}: ${OUTCOME_WORDS[outcome] ?? outcome}`)}" style="background:${COLORS[outcome]}"></td>`;
    });
    const result =
      row.outcome === 'client' && row.provenBy
        ? `proven on the client (${esc(row.provenBy)})`
        : row.outcome === 'not_proven' && row.stoppedBy?.length
          ? `not proven: ${esc(row.stoppedBy.map((s) => `${s.check} failed first on ${s.clause}`).join('; '))}`
          : esc(OUTCOME_WORDS[row.outcome] ?? row.outcome);
    return `<tr data-clause="${esc(row.id)}" data-outcome="${row.outcome}"><td><b>${esc(row.id)}</b> <span class="muted">${esc(row.observe.join(', '))}</span></td><td class="rule">${esc(row.rule)}</td><td style="color:${COLORS[row.outcome]}">${result}</td>${cells.join('')}</tr>`;
  });
  const unseen = report.clauses.filter((row) => row.outcome === 'uncovered').length;
  return [
    legend(['passed', 'failed', 'warned', 'not_proven', 'skipped', 'not_applicable', 'uncovered', 'client']),
    `<p class="muted">Each row a clause of the service interface, each column a check; a coloured cell says the check proves the clause and how it came out. ${Object.entries(MARKDOWN_RESULTS).map(([key, { means }]) => `${esc(OUTCOME_WORDS[key] ?? key)}: ${esc(means)}`).join('; ')}. ${unseen ? `${counted(unseen, 'clause')} a client could see ${unseen === 1 ? 'has' : 'have'} no check.` : ''}</p>`,
    `<div style="overflow-x:auto"><table class="matrix" id="clause-matrix"><thead>${head}</thead><tbody>${rows.join('\n')}</tbody></table></div>`,
  ].join('\n');
}

function checksHtml(report: Report): string {
  if (report.results.length === 0) return '<p>No check ran.</p>';
  const row = (r: CheckResult) => {
    // The check's limit is not shown beside its time: it is mostly the run's bound, and
    // "0.04 s of 801 s" read as a share of something. It is in the cell's tooltip.
    const seconds = `${(r.durationMs / 1000).toFixed(2)} s`;
    const limit = r.limitSeconds === undefined ? '' : ` title="${esc(`its limit: ${r.limitSeconds} s, the longest it could have run before it was stopped and reported not run`)}"`;
    const detail: string[] = [];
    if (r.reason) detail.push(esc(r.reason));
    if (r.failure) {
      const f = r.failure;
      detail.push(`<b>${esc(f.clause)}</b>: ${esc(maskSecrets(f.message))}`);
      if (f.expected) detail.push(`expected: ${esc(maskSecrets(f.expected))}`);
      if (f.received) detail.push(`received: ${esc(maskSecrets(f.received))}`);
      if (f.fix) detail.push(`fix: ${esc(f.fix)}`);
      if (f.exchanges.length) detail.push(`<details open><summary>${counted(f.exchanges.length, 'exchange')} that show it</summary>${f.exchanges.map((ex) => `<pre class="exchange">${esc(maskSecrets(ex))}</pre>`).join('')}</details>`);
      if (f.reproduction?.length) detail.push(`<details><summary>reproduce (keys from the environment)</summary><pre class="exchange">${esc(maskSecrets(f.reproduction.join('\n')))}</pre></details>`);
    }
    for (const warning of r.warnings ?? []) detail.push(`note: ${esc(warning)}`);
    return `<tr data-check="${esc(r.id)}" data-outcome="${r.outcome}"><td><b>${esc(r.id)}</b><br><span class="muted">${esc(r.title)}${r.optional ? ' [optional]' : ''}</span></td><td style="color:${COLORS[r.outcome]};font-weight:600">${esc(OUTCOME_WORDS[r.outcome] ?? r.outcome)}</td><td>${esc([...r.clauses, ...r.decisions].join(', '))}</td><td${limit}>${seconds}</td><td>${detail.join('<br>')}</td></tr>`;
  };
  return `<table id="check-results"><thead><tr><th>check</th><th>outcome</th><th>clauses</th><th>time taken</th><th>why</th></tr></thead><tbody>${report.results.map(row).join('\n')}</tbody></table>`;
}

function picturesHtml(observations: Observations | undefined): string {
  if (!observations) return '<p>This report has no observations over time (a run that did not start, or a receiver or proxy run).</p>';
  return [
    `<p class="legend"><span><i class="swatch" style="background:${COLORS.passed}"></i>as asked</span><span><i class="swatch" style="background:${COLORS.intended}"></i>provoked on purpose by a check (the behaviour it asked for, not a flaw)</span><span><i class="swatch" style="background:${COLORS.failed}"></i>not what the run asked for</span></p>`,
    figure('webhooks', 'Each webhook event\'s delivery attempts, in seconds from its first, against the documented retry schedule (grey bands: when each retry is due, with its jitter; where the run moved a sandbox clock forward, a due retry goes at once and comes before its band). Green: the runner\'s receiver acknowledged it; grey-blue: it answered 500 on purpose, to see the retry (webhooks.retried-after-failure) or that a failed delivery changes nothing; red: the attempt did not verify (wrong signature or a stale timestamp), answered 400.', webhookChart(observations.webhooks, observations.schedule)),
    figure('rate-limits', 'RateLimit-Remaining of each key and bucket over the run, in seconds from its start; dashed lines: the ends of the windows the answers announced (RateLimit-Reset); grey-blue dots: 429 answers, which the rate-limit checks provoke on purpose by using a window up (every other request is paced within the limits, so a 429 comes only where a check asks for one).', remainingChart(observations.remaining)),
    figure('jobs', 'How long each job took, from the answer to its create to the first read of its final state, by kind. Green: ready as asked; grey-blue: failed on purpose (created with the failure marker, for the failure checks); red: ended otherwise than the run asked.', jobsChart(observations.jobs)),
  ].join('\n');
}

function figure(name: string, caption: string, svg: string): string {
  return `<figure data-picture="${name}"><figcaption>${esc(caption)}</figcaption>${svg}</figure>`;
}

const WIDTH = 900;
const LEFT = 230;
const RIGHT = 30;

function empty(name: string, why: string): string {
  return `<svg data-chart="${name}" role="img" aria-label="${esc(why)}" width="${WIDTH}" height="40" xmlns="http://www.w3.org/2000/svg"><text x="8" y="24">${esc(why)}</text></svg>`;
}

/** Round steps for an axis from 0 to max: about six ticks. */
function ticks(max: number): number[] {
  if (!(max > 0)) return [0];
  const raw = max / 6;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let t = 0; t <= max + step / 1000; t += step) out.push(Number(t.toFixed(6)));
  return out;
}

function axis(x: (v: number) => number, max: number, y: number, unit: string): string {
  return ticks(max)
    .map((t) => `<line x1="${x(t)}" x2="${x(t)}" y1="${y}" y2="${y + 4}" stroke="#9e9e9e"/><text x="${x(t)}" y="${y + 15}" text-anchor="middle">${t}${unit}</text>`)
    .join('');
}

function webhookChart(events: readonly WebhookAttemptsSeen[], schedule: Observations['schedule']): string {
  if (events.length === 0) return empty('webhooks', 'No webhook was received in this run.');
  const row = 22;
  const top = 10;
  const dueAt = (n: number) => (schedule ? schedule.delaysSeconds.slice(0, n).reduce((a, b) => a + b, 0) : undefined);
  const span = (event: WebhookAttemptsSeen) => (event.attempts.at(-1)!.atMs - event.attempts[0]!.atMs) / 1000;
  // Wide enough for every attempt seen and the retry each event would have had next.
  const max = Math.max(1, ...events.map((event) => Math.max(span(event), (dueAt(event.attempts.length) ?? 0) * (1 + (schedule?.jitter ?? 0))))) * 1.05;
  const x = (s: number) => LEFT + (s / max) * (WIDTH - LEFT - RIGHT);
  const height = top + events.length * row + 26;
  const marks = events.map((event, i) => {
    const y = top + i * row + row / 2;
    const first = event.attempts[0]!.atMs;
    const bands = schedule
      ? schedule.delaysSeconds.slice(0, Math.max(0, event.attempts.length)).map((_d, k) => {
          const due = dueAt(k + 1)!;
          const from = Math.max(0, dueAt(k)! + schedule.delaysSeconds[k]! * (1 - schedule.jitter));
          const to = dueAt(k)! + schedule.delaysSeconds[k]! * (1 + schedule.jitter);
          return `<rect class="due" x="${x(from)}" y="${y - 7}" width="${Math.max(2, x(to) - x(from))}" height="14" fill="#e0e0e0"><title>retry ${k + 1} due at ${due} s${schedule.jitter ? ` ±${Math.round(schedule.jitter * 100)} %` : ''}</title></rect>`;
        })
      : [];
    const dots = event.attempts.map((attempt, k) => {
      const s = (attempt.atMs - first) / 1000;
      const ok = attempt.answered >= 200 && attempt.answered < 300;
      // The runner's receiver answers 500 only when the job's mode asks it to (a retry to
      // see), and 400 only to an attempt that does not verify.
      const refused = attempt.answered === 500;
      const why = ok ? 'acknowledged' : refused ? 'refused on purpose to see a retry' : 'did not verify';
      return `<circle class="attempt" data-answered="${attempt.answered}" cx="${x(s)}" cy="${y}" r="5" fill="${ok ? COLORS.passed : refused ? COLORS.intended : COLORS.failed}"><title>attempt ${k + 1} at ${s.toFixed(2)} s, answered ${attempt.answered}: ${why}</title></circle>`;
    });
    return `<text x="${LEFT - 8}" y="${y + 4}" text-anchor="end">${esc(`${event.label}${event.type ? ` ${event.type}` : ''}`)}</text><line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y}" y2="${y}" stroke="#eeeeee"/>${bands.join('')}${dots.join('')}`;
  });
  const label = `Webhook attempts of ${counted(events.length, 'event')}${schedule ? ` against the retry schedule ${schedule.delaysSeconds.join(', ')} s` : ''}`;
  return `<svg data-chart="webhooks" role="img" aria-label="${esc(label)}" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" xmlns="http://www.w3.org/2000/svg">${marks.join('')}${axis(x, max, top + events.length * row, ' s')}</svg>`;
}

function remainingChart(series: readonly RemainingSeen[]): string {
  if (series.length === 0) return empty('rate-limits', 'No answer carried RateLimit headers in this run.');
  const windowEnd = (p: RemainingSeen['points'][number]) => Math.round(p.atMs / 1000 + p.resetSeconds);
  // The run, and at least the first window end it was told of: a short run ends inside its first window.
  const end = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p.atMs / 1000)), Math.min(...series.flatMap((s) => s.points.map(windowEnd)))) * 1.02;
  const panel = 120;
  const gap = 34;
  const x = (s: number) => LEFT + (Math.min(s, end) / end) * (WIDTH - LEFT - RIGHT);
  const panels = series.map((s, i) => {
    const top = 10 + i * (panel + gap);
    const limit = Math.max(1, ...s.points.map((p) => Math.max(p.limit, p.remaining)));
    const y = (v: number) => top + panel - (v / limit) * panel;
    const path = s.points.map((p, k) => `${k === 0 ? 'M' : 'L'}${x(p.atMs / 1000).toFixed(1)},${y(p.remaining).toFixed(1)}`).join(' ');
    const announced = [...new Set(s.points.map(windowEnd))];
    const windowEnds = announced.filter((t) => t <= end);
    const later = announced.filter((t) => t > end);
    const resets = windowEnds.map((t) => `<line class="window-end" x1="${x(t)}" x2="${x(t)}" y1="${top}" y2="${top + panel}" stroke="#90a4ae" stroke-dasharray="3,3"><title>a window announced to end at ${t} s</title></line>`);
    const refused = s.points.filter((p) => p.status === 429).map((p) => `<circle class="refused" cx="${x(p.atMs / 1000)}" cy="${y(p.remaining)}" r="3" fill="${COLORS.intended}"><title>429 at ${(p.atMs / 1000).toFixed(1)} s: a window used up on purpose by a rate-limit check</title></circle>`);
    const limits = [...new Set(s.points.map((p) => p.limit))].join(' / ');
    return [
      `<text x="${LEFT - 8}" y="${top + 14}" text-anchor="end" font-weight="600">${esc(`${s.key} key, ${s.bucket}`)}</text>`,
      `<text x="${LEFT - 8}" y="${top + 30}" text-anchor="end">limit ${esc(limits)}, ${counted(s.points.length, 'answer')}</text>`,
      ...(later.length ? [`<text x="${LEFT - 8}" y="${top + 46}" text-anchor="end">${counted(later.length, 'window')} ending after ${Math.round(end)} s</text>`] : []),
      `<rect x="${LEFT}" y="${top}" width="${WIDTH - LEFT - RIGHT}" height="${panel}" fill="none" stroke="#e0e0e0"/>`,
      `<text x="${LEFT - 4}" y="${top + 4}" text-anchor="end">${limit}</text><text x="${LEFT - 4}" y="${top + panel}" text-anchor="end">0</text>`,
      ...resets,
      `<path class="remaining" d="${path}" fill="none" stroke="#1565c0" stroke-width="1.5"/>`,
      ...refused,
      axis(x, end, top + panel, ' s'),
    ].join('');
  });
  const height = 10 + series.length * (panel + gap);
  return `<svg data-chart="rate-limits" role="img" aria-label="${esc(`RateLimit-Remaining of ${counted(series.length, 'key and bucket', 'keys and buckets')} over the run`)}" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" xmlns="http://www.w3.org/2000/svg">${panels.join('')}</svg>`;
}

/** A job is drawn as the run asked it to end: ready, failed on purpose, or neither. */
function jobColor(job: JobSeen): string {
  const asked = job.expected ?? 'ready';
  if (asked === 'any' || job.ended === asked) return job.ended === 'failed' ? COLORS.intended! : COLORS.passed!;
  return COLORS.failed!;
}

function jobsChart(jobs: readonly JobSeen[]): string {
  if (jobs.length === 0) return empty('jobs', 'No job of this run reached a final state.');
  const kinds = [...new Set(jobs.map((j) => j.kind))];
  const ordered = kinds.flatMap((kind) => jobs.filter((j) => j.kind === kind).sort((a, b) => a.durationMs - b.durationMs));
  const row = 18;
  const headed = 20;
  const max = Math.max(0.1, ...jobs.map((j) => j.durationMs / 1000)) * 1.05;
  const x = (s: number) => LEFT + (s / max) * (WIDTH - LEFT - RIGHT);
  let y = 6;
  const marks: string[] = [];
  for (const kind of kinds) {
    const mine = ordered.filter((j) => j.kind === kind);
    const seconds = mine.map((j) => j.durationMs / 1000);
    const median = seconds[Math.floor((seconds.length - 1) / 2)]!;
    marks.push(`<text x="8" y="${y + 14}" font-weight="600">${esc(kind)}: ${counted(mine.length, 'job')}, ${seconds[0]!.toFixed(2)} to ${seconds.at(-1)!.toFixed(2)} s, median ${median.toFixed(2)} s</text>`);
    y += headed;
    for (const job of mine) {
      const s = job.durationMs / 1000;
      marks.push(`<text x="${LEFT - 8}" y="${y + 12}" text-anchor="end">${esc(job.label)}</text><rect class="job" data-kind="${esc(job.kind)}" x="${LEFT}" y="${y + 3}" width="${Math.max(1, x(s) - LEFT)}" height="${row - 6}" fill="${jobColor(job)}"><title>${esc(`${job.label}: ${job.ended} after ${s.toFixed(2)} s${job.expected === 'failed' && job.ended === 'failed' ? ', failed on purpose' : ''}`)}</title></rect><text x="${x(s) + 4}" y="${y + 12}">${s.toFixed(2)} s</text>`);
      y += row;
    }
  }
  const height = y + 26;
  return `<svg data-chart="jobs" role="img" aria-label="${esc(`Durations of ${counted(jobs.length, 'job')} by kind`)}" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" xmlns="http://www.w3.org/2000/svg">${marks.join('')}${axis(x, max, y + 2, ' s')}</svg>`;
}
