// Figures the docs quote from a run. A guide writes such a figure inside a span,
// `<!-- run:conformance.seconds -->24.7<!-- /run -->`, whose text is the figure of the
// run recorded in the repository (the benchmark's bench/latest.json, which every full
// `npm run bench` rewrites), never typed by hand: `npm run docs` fills the spans of the
// pages it builds, `node scripts/docFigures.ts --write` fills the guides themselves, and
// test/docs-site.test.ts fails on a guide whose span says another figure than the record.
// The contract's numbers have spans of their own (docNumbers.ts, `<!-- n:… -->`).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatNumber } from '../contract/readNumbers.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BENCH = join(ROOT, 'bench', 'latest.json');
const SPAN = /<!-- run:([\w.]+) -->([\s\S]*?)<!-- \/run -->/g;

/** The Markdown files whose run spans are filled: the README and the guides. */
export function figureDocs(root: string = ROOT): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
}

interface BenchRecord {
  startedAt: string;
  commit: { sha: string };
  machine: { cores: number };
  conformance?: { wallSeconds: number; verdict: string; counts: { passed: number; failed: number; notApplicable: number } };
  media?: { files: { what: string; aspectRatio: string | null; durationSeconds: number | null; cpuSeconds: number }[] };
}

export function readRunRecords(file: string = BENCH): BenchRecord {
  return JSON.parse(readFileSync(file, 'utf8')) as BenchRecord;
}

/** Every key a span may name, with the figure it stands for. */
export function figureTexts(bench: BenchRecord): ReadonlyMap<string, string> {
  const texts = new Map<string, string>();
  texts.set('bench.date', bench.startedAt.slice(0, 10));
  texts.set('bench.commit', bench.commit.sha.slice(0, 7));
  texts.set('bench.cores', String(bench.machine.cores));
  const run = bench.conformance;
  if (run) {
    texts.set('conformance.seconds', (Math.round(run.wallSeconds * 10) / 10).toFixed(1));
    texts.set('conformance.passed', formatNumber(run.counts.passed));
    texts.set('conformance.not-applicable', formatNumber(run.counts.notApplicable));
    texts.set('conformance.verdict', run.verdict);
  }
  // The 30-second videos' jobs: CPU seconds per second of video, per frame.
  for (const file of bench.media?.files ?? []) {
    if (!file.aspectRatio || !file.durationSeconds) continue;
    texts.set(`media.cpu-per-second.${file.aspectRatio}`, String(Math.round((file.cpuSeconds / file.durationSeconds) * 1000) / 1000));
  }
  return texts;
}

/** The text with every run span filled; throws naming a key no record has. */
export function fillFigures(text: string, bench: BenchRecord, file = 'the text'): string {
  const texts = figureTexts(bench);
  return text.replace(SPAN, (_span, key: string) => {
    const value = texts.get(key);
    if (value === undefined) throw new Error(`${file}: <!-- run:${key} --> names no figure of the recorded runs (known: ${[...texts.keys()].join(', ')})`);
    return `<!-- run:${key} -->${value}<!-- /run -->`;
  });
}

if (import.meta.main) {
  const bench = readRunRecords();
  const stale = figureDocs().filter((doc) => {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const filled = fillFigures(text, bench, doc);
    if (filled !== text && process.argv.includes('--write')) writeFileSync(join(ROOT, doc), filled);
    return filled !== text;
  });
  if (stale.length === 0) console.log('The docs quote the recorded runs.');
  else if (process.argv.includes('--write')) console.log(`Wrote ${stale.join(', ')}.`);
  else {
    console.error(`Figures differ from the recorded runs in ${stale.join(', ')}: run "node scripts/docFigures.ts --write".`);
    process.exitCode = 1;
  }
}
