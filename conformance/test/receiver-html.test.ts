// The HTML report of a receiver run on a broken receiver: it names no profile (a receiver
// run is judged by the source's receiver clauses alone), counts its failure, and its
// clause rows agree with their cells and with the counts of checks. The receiver here
// skips its signature check, so receiver.signature-verified fails on WH-RECEIVER-VERIFY
// before it could prove WH-SIGNATURE, its other clause.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReceiverConformance } from '../src/receiver-checks/run.ts';
import { toHtml } from '../src/report/html.ts';
import type { Report } from '../src/report/model.ts';
import { RECEIVER_SECRET, startIndependentReceiver, type RunningReceiver } from './fixtures/receivers.ts';

/** The text of an HTML fragment, tags taken out. */
function text(html: string): string {
  return html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
}

/** Each `<tr data-...>` row of a table: its attribute value, its outcome and its cells' outcomes. */
function rows(html: string, attribute: 'data-clause' | 'data-check'): { id: string; outcome: string; cells: string[]; text: string }[] {
  return [...html.matchAll(new RegExp(`<tr ${attribute}="([^"]+)" data-outcome="([^"]+)">([\\s\\S]*?)</tr>`, 'g'))].map(([, id, outcome, inner]) => ({
    id: id!,
    outcome: outcome!,
    cells: [...inner!.matchAll(/<td class="cell" data-outcome="([^"]+)"/g)].map(([, cell]) => cell!),
    text: text(inner!),
  }));
}

describe('the HTML report of a receiver run', () => {
  let receiver: RunningReceiver;
  let report: Report;
  let html: string;
  beforeAll(async () => {
    receiver = await startIndependentReceiver({ flaw: 'no-signature-check' });
    report = await runReceiverConformance({ url: receiver.url, signingSecret: RECEIVER_SECRET, timeoutSeconds: 3 });
    html = toHtml(report);
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('when the receiver is broken, then the page fails it, counts its failure and names no profile', () => {
    expect(report.verdict).toBe('fail');
    const summary = text(html.slice(html.indexOf('<body>'), html.indexOf('id="matrix"')));
    expect(summary).toMatch(/^Receiver conformance report: .* FAIL the runner played the sender/);
    expect(summary).not.toMatch(/\bprofile\b/i);
    expect(summary).toContain('Checks: 5 passed, 1 failed, 0 skipped, 0 not applicable.');
    const checks = rows(html, 'data-check');
    expect(checks.filter((row) => row.outcome === 'failed').map((row) => row.id)).toEqual(['receiver.signature-verified']);
    expect(checks.filter((row) => row.outcome === 'skipped')).toEqual([]);
  });

  it('when a check failed on one of its clauses, then its other clause reads not proven, its cell is not a failure, and the clause tally matches the rows', () => {
    const clauses = rows(html, 'data-clause');
    const signature = clauses.find((row) => row.id === 'WH-SIGNATURE')!;
    expect(signature.outcome).toBe('not_proven');
    expect(signature.cells).toEqual(['not_proven']);
    expect(signature.text).toContain('not proven: receiver.signature-verified failed first on WH-RECEIVER-VERIFY');
    expect(clauses.find((row) => row.id === 'WH-RECEIVER-VERIFY')?.cells).toContain('failed');
    // No clause says "skipped" when no check was.
    expect(clauses.filter((row) => row.outcome === 'skipped')).toEqual([]);
    // Each row is the worst of its cells, and the summary's tally counts the rows.
    for (const row of clauses) expect(row.cells, row.id).toContain(row.outcome);
    const tally = (outcome: string) => clauses.filter((row) => row.outcome === outcome).length;
    expect(text(html)).toContain(`Clauses: ${tally('passed')} held, ${tally('failed')} broken, ${tally('not_proven')} not proven`);
  });
});
