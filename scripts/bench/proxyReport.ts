// The proxy part of bench/latest.md (parts/proxy.ts): the conformance proxy's memory
// after about 1 GB of traffic through it. Kept apart from report.ts, which renders the
// other parts; report.ts lists this section among its own.
import type { BenchReport } from './model.ts';
import { formatInt, formatNumber, MB } from './stats.ts';

const mb = (bytes: number) => (Number.isNaN(bytes) ? 'n/a' : `${formatNumber(bytes / MB)} MB`);

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

export function proxySection(report: BenchReport): string[] {
  const p = report.proxy;
  if (!p) return [];
  return [
    '## 9. Conformance proxy: memory over a long run',
    '',
    `The proxy as users run it (\`avatar-conformance proxy\`, a process of its own) in front of a server on the embedded store, on the loopback: ${formatInt(p.largeBodies)} creates of ${formatInt(p.largeBodyBytes / 2 ** 20)} MiB each (every other one chunked), which the service refuses past its limit and the proxy must not hold, and ${formatInt(p.exchanges - p.largeBodies)} small exchanges between them (creates that route a webhook_url and answer 402, reads of /v1/me), each recorded for judging. ${formatNumber(p.trafficBytes / MB)} MB in ${formatNumber(p.seconds)} s.`,
    '',
    table(['traffic', 'exchanges', 'RSS idle', 'RSS after', 'peak RSS (sampled)', 'peak RSS (VmHWM)', 'unexpected'], [[`${formatNumber(p.trafficBytes / MB)} MB`, formatInt(p.exchanges), mb(p.rssIdleBytes), mb(p.rssAfterBytes), mb(p.peakRssBytes), mb(p.hwmBytes), p.unexpected.length ? p.unexpected.join('; ') : '0']]),
    '',
  ];
}
