// The working tree's own files, read without git: a source tarball has no .git, so a test
// that copies the repository cannot ask git which files are its own. What .gitignore
// names is made by tools (node_modules/, dist/ with the packages' copies of generated/,
// data/, the reports), so it is left out here as git leaves it out. The file's patterns
// are of two simple forms, a folder (`dist/`) or a file name (`*.log`), each matched at
// any depth; a pattern of another form is refused rather than misread.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Whether `name`, a file or folder at any depth, is one git ignores here (or `.git` itself). */
export function ignoredByGit(root: string): (name: string, isDirectory: boolean) => boolean {
  const folders = [/^\.git$/];
  const any: RegExp[] = [];
  for (const raw of readFileSync(join(root, '.gitignore'), 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (/^[^/!\\[]+\/$/.test(line)) folders.push(nameGlob(line.slice(0, -1)));
    else if (/^[^/!\\[]+$/.test(line)) any.push(nameGlob(line));
    else throw new Error(`.gitignore: "${line}" is of a form test/support/workingTree.ts does not read; teach it`);
  }
  return (name, isDirectory) => any.some((glob) => glob.test(name)) || (isDirectory && folders.some((glob) => glob.test(name)));
}

/** A name pattern of .gitignore (`*` and `?` within one name) as a regular expression. */
function nameGlob(pattern: string): RegExp {
  const source = pattern.replace(/[.+^${}()|\\]/g, '\\$&').replaceAll('*', '.*').replaceAll('?', '.');
  return new RegExp(`^${source}$`);
}

/** Every file of the working tree that git would list as tracked or new, relative to `root`. */
export function workingTreeFiles(root: string): string[] {
  const ignored = ignoredByGit(root);
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (ignored(entry.name, entry.isDirectory())) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) found.push(path);
    }
  };
  walk('');
  return found;
}
