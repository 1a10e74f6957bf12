// The CI recipe in conformance/examples/ is a workflow a user copies: every command it
// runs must exist, with the flags it passes, and its steps must fit together (the report
// it keeps is the one it compares, under the name it downloads).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { VERSION } from '../src/report/build.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const WORKFLOW = new URL('../examples/github-actions.yml', import.meta.url).pathname;
const CLI = new URL('../src/cli.ts', import.meta.url).pathname;

interface Step { name?: string; uses?: string; run?: string; with?: Record<string, string>; if?: string }
const workflow = parse(readFileSync(WORKFLOW, 'utf8')) as { on: Record<string, unknown>; jobs: Record<string, { steps: Step[] }> };
const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
/** Each shell command of the run steps, continuation lines joined, comments dropped. */
const commands = steps.flatMap((step) => (step.run ?? '').replace(/\\\n\s*/g, ' ').split('\n')).map((line) => line.replace(/(^|\s)#.*$/, '').trim()).filter(Boolean);
const runnerCalls = commands.filter((line) => /^avatar-conformance\b/.test(line));
const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' }).stdout;
const compareHelp = spawnSync(process.execPath, [CLI, 'compare', '--help'], { encoding: 'utf8' }).stdout;

function flags(line: string): string[] {
  return line.split(/\s+/).filter((word) => word.startsWith('--'));
}

describe('the GitHub Actions example', () => {
  it('when parsed, then it runs on pushes to main and pull requests, and keeps the reports as an artifact even when the run fails', () => {
    expect(Object.keys(workflow.on).sort()).toEqual(['pull_request', 'push']);
    const upload = steps.find((step) => step.uses?.startsWith('actions/upload-artifact@'));
    expect(upload?.if).toBe('always()');
    expect(upload?.with?.path).toBe('reports/');
  });

  it('when it calls the runner, then every flag it passes is one the runner documents in --help', () => {
    expect(help).toContain('--report-html');
    const run = runnerCalls.find((line) => !line.includes(' compare '));
    expect(run).toBeDefined();
    for (const flag of flags(run!)) expect(help, `${flag} in --help`).toMatch(new RegExp(`(^|\\s)${flag}(\\s|$)`, 'm'));
    expect(flags(run!)).toEqual(expect.arrayContaining(['--report-json', '--report-html', '--max-credits']));
  });

  it('when it compares, then it compares the JSON report it wrote with the one of the same name from the artifact it downloads', () => {
    expect(compareHelp).toMatch(/^Usage: .*compare <before.json> <after.json>/m);
    const compare = runnerCalls.find((line) => /^avatar-conformance compare /.test(line))!;
    const [before, after] = compare.split(/\s+/).slice(2);
    const written = /--report-json (\S+)/.exec(runnerCalls.join('\n'))![1]!;
    expect(after).toBe(written);
    const download = commands.find((line) => line.startsWith('gh run download'))!;
    const dir = /--dir (\S+)/.exec(download)![1];
    expect(/--name (\S+)/.exec(download)![1]).toBe(steps.find((step) => step.uses?.startsWith('actions/upload-artifact@'))?.with?.name);
    expect(before).toBe(`${dir}/${written.split('/').at(-1)}`);
  });

  it('when it installs the runner, then the npm scripts it names exist and the package file is the one npm run packages makes', () => {
    const scripts = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const line of commands.filter((l) => /^npm run /.test(l))) expect(Object.keys(scripts)).toContain(line.split(/\s+/).filter((w) => !w.startsWith('-'))[2]);
    expect(commands.some((line) => line === 'npm start > "$RUNNER_TEMP/server.log" 2>&1 &')).toBe(true);
    const tarball = commands.find((line) => line.startsWith('npm install ') && line.endsWith('.tgz"'));
    expect(tarball).toContain(`avatar-service-conformance-${VERSION}.tgz`);
    expect(readFileSync(`${ROOT}scripts/packages.ts`, 'utf8')).toContain("name: '@avatar-service/conformance'");
    // The operator command makes the accounts with the flags the workflow passes.
    const admin = readFileSync(`${ROOT}server/src/admin.ts`, 'utf8');
    expect(admin).toMatch(/create-account \[--name N\] \[--credits N\].*\[--json\]/);
  });
});
