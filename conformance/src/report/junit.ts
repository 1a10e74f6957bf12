// JUnit XML, for CI systems that show test results: one testcase per check, grouped by
// area; a failed check is a <failure>, a skipped or not-applicable one <skipped>. A
// warning (an optional check's flaw) decides nothing, so it is no <failure> a CI tool
// would count: the case passes, with a property naming the warning and its detail in
// <system-out>.
import type { FailureReport, Report } from './model.ts';

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD]/g, '');
}

function failureText(f: FailureReport): string {
  return [f.message, f.expected && `expected: ${f.expected}`, f.received && `received: ${f.received}`, f.fix && `fix: ${f.fix}`, ...f.exchanges, ...(f.reproduction?.length ? ['reproduce:', ...f.reproduction] : [])].filter(Boolean).join('\n');
}

export function toJunit(report: Report): string {
  // JUnit has no place for a run's own figures but a suite's properties: each suite repeats the bound.
  const properties = report.bound
    ? `    <properties>\n      <property name="bound_seconds" value="${report.bound.seconds}"/>\n      <property name="bound_reached" value="${report.bound.reached}"/>\n    </properties>\n`
    : '';
  const areas = [...new Set(report.results.map((r) => r.area))];
  const suites = areas.map((area) => {
    const results = report.results.filter((r) => r.area === area);
    const cases = results.map((r) => {
      const name = `${r.id} [${[...r.clauses, ...r.decisions].join(', ')}] ${r.title}`;
      const open = `    <testcase classname="conformance.${escape(area)}" name="${escape(name)}" time="${(r.durationMs / 1000).toFixed(3)}"`;
      // A warning (a slow receiver) does not fail the case; CI shows it as the case's output.
      const output = r.warnings?.length ? `\n      <system-out>${escape(r.warnings.map((w) => `note: ${w}`).join('\n'))}</system-out>` : '';
      if (r.outcome === 'passed') return output ? `${open}>${output}\n    </testcase>` : `${open}/>`;
      if (r.outcome === 'failed') {
        const f = r.failure!;
        return `${open}>\n      <failure type="${escape(f.clause)}" message="${escape(`${f.clause}: ${f.message}`)}">${escape(failureText(f))}</failure>\n    </testcase>`;
      }
      if (r.outcome === 'warned') {
        const f = r.failure!;
        const property = `\n      <properties>\n        <property name="warning" value="${escape(`${f.clause}: ${f.message}`)}"/>\n      </properties>`;
        const text = [`warning (an optional check; it does not decide the verdict): ${f.clause}: ${failureText(f)}`, ...(r.warnings ?? []).map((w) => `note: ${w}`)].join('\n');
        return `${open}>${property}\n      <system-out>${escape(text)}</system-out>\n    </testcase>`;
      }
      const why = `${r.outcome === 'not_applicable' ? 'not applicable' : r.required ? 'required, not run' : 'skipped'}: ${r.reason ?? ''}`;
      return `${open}>\n      <skipped message="${escape(why)}"/>\n    </testcase>`;
    });
    const failures = results.filter((r) => r.outcome === 'failed').length;
    const skipped = results.filter((r) => r.outcome === 'skipped' || r.outcome === 'not_applicable').length;
    const time = results.reduce((sum, r) => sum + r.durationMs, 0) / 1000;
    return `  <testsuite name="conformance.${escape(area)}" tests="${results.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time.toFixed(3)}">\n${properties}${cases.join('\n')}\n  </testsuite>`;
  });
  const failures = report.counts.failed;
  const skipped = report.counts.skipped + report.counts.notApplicable;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${escape(`${report.tool} ${report.profile} ${report.baseUrl}`)}" tests="${report.results.length}" failures="${failures}" errors="${report.abort ? 1 : 0}" skipped="${skipped}" time="${(report.durationMs / 1000).toFixed(3)}">`,
    ...(report.abort ? [`  <testsuite name="conformance.preflight" tests="1" failures="0" errors="1"><testcase classname="conformance.preflight" name="preflight"><error type="${report.abort.kind}" message="${escape(report.abort.message)}"/></testcase></testsuite>`] : []),
    // A CI page shows test suites: the setup warnings are one of its own, in its system-out.
    ...(report.setup?.length ? [`  <testsuite name="conformance.setup" tests="0" failures="0" errors="0" skipped="0"><system-out>${escape(report.setup.map((warning) => `setup warning: ${warning}`).join('\n'))}</system-out></testsuite>`] : []),
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
