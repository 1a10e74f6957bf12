// The one way the contract is bundled: Redocly's bundle of the API that redocly.yaml names,
// as generated/openapi.json holds it. `npm run generate` writes it; `npm run contract:diff`
// compares it as openapi/ says now, so an edit not yet regenerated is judged all the same.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';

const ROOT = resolve(import.meta.dirname, '..');
const REDOCLY = join(ROOT, 'node_modules', '.bin', 'redocly');
/** The API's name in redocly.yaml. */
const API = 'avatar-service';

/** Redocly could not bundle the contract; the message is its first line of complaint. */
export class BundleError extends Error {
  override name = 'BundleError';
}

/** The bundle's text, made from `repo`'s redocly.yaml and openapi/ by this checkout's Redocly. */
export function bundleContract(repo: string = ROOT): string {
  const scratch = mkdtempSync(join(tmpdir(), 'contract-'));
  try {
    const out = join(scratch, 'openapi.json');
    try {
      // On this process's Node: through PATH, the command's own line could pick an older one.
      // NO_COLOR: Redocly colours its complaint whenever FORCE_COLOR is set, even to 0.
      execFileSync(process.execPath, [REDOCLY, 'bundle', API, '-o', out], { cwd: repo, stdio: 'pipe', env: { ...process.env, REDOCLY_TELEMETRY: 'off', NO_COLOR: '1' } });
    } catch (error) {
      const { stderr, message } = error as { stderr?: Buffer; message: string };
      // Redocly's complaint, without its banners (boxed notices) and its progress line.
      const complaint = stripVTControlCharacters(stderr?.toString() || message)
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line.length > 0 && !/^[╔╚║═]/.test(line) && !line.startsWith('bundling '))
        .slice(0, 2)
        .join(' ');
      throw new BundleError(`cannot bundle ${join(repo, 'openapi')}: ${complaint || 'redocly bundle failed'}`);
    }
    return readFileSync(out, 'utf8');
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
