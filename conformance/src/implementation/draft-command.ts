// `draft-profile <openapi file or URL>`: prints (or writes) the drafted implementation
// profile and lists on stderr the members a person must review before a run.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { draftProfile, type Draft } from './draft.ts';
import { DocumentError, firstLine, loadDocument } from './openapi-document.ts';

const USAGE = 'usage: draft-profile <openapi file or URL> [--name <name>] [--output <file>]';

/** `draft-profile`: prints (or writes) the draft and lists the members to review on stderr. */
export async function draftCommand(argv: string[], io: { out(text: string): void; err(text: string): void }): Promise<number> {
  let args: { source: string; name: string | undefined; output: string | undefined; help: boolean };
  try {
    const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { name: { type: 'string' }, output: { type: 'string', short: 'o' }, help: { type: 'boolean', short: 'h' } } });
    if (!values.help && positionals.length !== 1) throw new Error(positionals.length === 0 ? 'an OpenAPI file or URL is required' : `one document at a time, not ${positionals.length}`);
    args = { source: positionals[0] ?? '', name: values.name, output: values.output, help: Boolean(values.help) };
  } catch (error) {
    io.err(`draft-profile: ${firstLine(error)}\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    io.out(`${USAGE}\nDrafts an implementation profile from an OpenAPI 3 document; review the members it lists before a run.\n`);
    return 0;
  }
  let draft: Draft;
  try {
    draft = draftProfile(await loadDocument(args.source), args.name === undefined ? {} : { name: args.name });
  } catch (error) {
    if (!(error instanceof DocumentError)) throw error;
    io.err(`draft-profile: ${error.message.includes(args.source) ? error.message : `${args.source}: ${error.message}`}\n`);
    return 2;
  }
  if (args.output) {
    try {
      await writeFile(args.output, draft.yaml);
    } catch (error) {
      io.err(`draft-profile: cannot write ${args.output} (${firstLine(error)})\n`);
      return 1;
    }
    io.out(`wrote ${args.output}: ${draft.notes.length} member(s) to review\n`);
  } else {
    io.out(draft.yaml);
  }
  for (const note of draft.notes) io.err(`review: ${note}\n`);
  return 0;
}
