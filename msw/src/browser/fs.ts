// What contract/schemas.ts takes from node:fs, for a page: the one file it reads, the
// contract's bundle, imported into the browser bundle instead of read from disk.
import bundle from '../../../generated/openapi.json' with { type: 'json' };

const BUNDLE = 'generated/openapi.json';

export function readFileSync(path: string | URL): string {
  const name = String(path);
  if (!name.endsWith(BUNDLE)) throw new Error(`the sandbox in a page reads no file but the contract's bundle (asked for ${name})`);
  return JSON.stringify(bundle);
}

export default { readFileSync };
