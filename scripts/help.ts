// `npm run <script> -- --help`: every script of package.json prints its usage and exits 0,
// whatever else it does, before it does anything (test/scriptsHelp.test.ts holds them to it).

/** Whether the arguments ask for help: --help or -h before a `--` that ends the options. */
export function asksForHelp(args: readonly string[] = process.argv.slice(2)): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** Prints the usage and ends the process with 0 when the arguments ask for help; else returns. */
export function answerHelp(usage: string, args?: readonly string[]): void {
  if (!asksForHelp(args)) return;
  process.stdout.write(usage.endsWith('\n') ? usage : `${usage}\n`);
  process.exit(0);
}

/**
 * node:util's parseArgs with a flag it does not know said in one line, naming the
 * command's --help, and exit 2: never a stack trace.
 */
export function parseOrExit<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    process.stderr.write(`${command}: ${(error as Error).message.replaceAll('\n', ' ')} (see npm run ${command} -- --help)\n`);
    process.exit(2);
  }
}
