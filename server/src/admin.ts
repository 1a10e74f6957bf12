// `npm run admin -- <command> [flags]`: operator commands against the same store the
// server uses (DATA_DIR). Keys and signing secrets are printed on creation, and a signing
// secret again when its account is opted in to Standard Webhooks, in the form receivers paste.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, STORE_UNAVAILABLE_ADVICE, loadConfig, type Config } from './config.ts';
import { DomainError } from './domain/errors.ts';
import { createAccount, createWorkspace, issueKey } from './domain/accounts.ts';
import { systemClock } from './domain/clock.ts';
import { MAX_CREDITS, periodOf } from './domain/credits.ts';
import { MAX_RATE_LIMIT } from './domain/rateLimits.ts';
import { nameProblem } from './domain/text.ts';
import { accountNow } from './domain/sandboxClock.ts';
import { generateSigningSecret } from './domain/keys.ts';
import {
  STANDARD_WEBHOOK_ID_HEADER,
  STANDARD_WEBHOOK_SIGNATURE_HEADER,
  STANDARD_WEBHOOK_TIMESTAMP_HEADER,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  librariesTakeSecret,
  standardWebhookSecret,
} from '../../contract/webhookSignature.ts';
import type { Account, KeyMode, RatePlan } from './domain/model.ts';
import { StoreUnavailableError, type CreditsChanged, type Store } from './domain/ports.ts';
import { SchemaMissingError } from './storage/postgres-redis/database.ts';

const USAGE = `Usage: npm run admin -- <command> [flags]

  create-account [--name N] [--credits N] [--mode sandbox|live] [--json]
                                 new owner account with one key; prints account_id, api_key, signing_secret
  create-workspace --owner ID [--name N] [--credits N] [--mode sandbox|live] [--json]
                                 new workspace of an owner account with one key; it pays for its own jobs
  issue-key --account ID [--mode sandbox|live] [--json]
  revoke-key --key ID
  grant-credits --account ID --credits N       adds N credits to the account's current month (on its sandbox clock)
  set-credits --account ID --credits N         sets the monthly quota
  set-plan --account ID [--read-per-minute N] [--read-per-day N]
           [--generation-per-minute N] [--generation-per-day N]
  rotate-signing-secret --account ID [--json]
  set-standard-webhooks --account ID --on|--off [--json]
                                 webhooks also carry webhook-id, webhook-timestamp and
                                 webhook-signature (Standard Webhooks), or stop; X-Service-* stay;
                                 --on prints the signing secret as receivers paste it
  list-accounts [--json]
  list-workspaces --owner ID [--json]          an owner account and its workspaces, with this month's credits

--account takes an owner account or a workspace alike: each has its own keys, credits and plan.
Numbers are plain decimal digits: --credits from 0 to ${MAX_CREDITS} (an account's month, its
monthly credits and grants together, holds at most ${MAX_CREDITS}), the rate limits from 0 to
${MAX_RATE_LIMIT}. A name is printable text of 1 to 200 characters.

The store is the one the server uses: DATABASE_URL + REDIS_URL when set, else DATA_DIR (default ./data).`;

class UsageError extends Error {}

/** A flag's value refused: one line naming the flag, the value and what it takes, before anything is written (exit code 2). */
class ValueError extends Error {}

/** The store the settings name is not there: a setting to fix, but not a matter of usage. */
class StoreMissingError extends Error {}

/**
 * Opening an embedded store creates it, so a mistyped DATA_DIR would get a new, empty
 * store that answers every command as if all were well. Only the server creates one.
 */
function requireEmbeddedStore(config: Config, embeddedFile: string): void {
  if (config.databaseUrl) return;
  const file = join(config.dataDir, embeddedFile);
  if (!existsSync(file)) throw new StoreMissingError(`no embedded store at ${file}: check DATA_DIR; the server creates the store on its first start (npm start)`);
}

const OPTIONS = {
  name: { type: 'string' },
  credits: { type: 'string' },
  mode: { type: 'string' },
  account: { type: 'string' },
  key: { type: 'string' },
  owner: { type: 'string' },
  json: { type: 'boolean', default: false },
  on: { type: 'boolean', default: false },
  off: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
  'read-per-minute': { type: 'string' },
  'read-per-day': { type: 'string' },
  'generation-per-minute': { type: 'string' },
  'generation-per-day': { type: 'string' },
} as const;

/** The flags that take a number, and the most each takes. */
const NUMBERS = {
  credits: MAX_CREDITS,
  'read-per-minute': MAX_RATE_LIMIT,
  'read-per-day': MAX_RATE_LIMIT,
  'generation-per-minute': MAX_RATE_LIMIT,
  'generation-per-day': MAX_RATE_LIMIT,
} as const;
type NumberFlag = keyof typeof NUMBERS;
const isNumberFlag = (flag: string): flag is NumberFlag => Object.hasOwn(NUMBERS, flag);

/**
 * The arguments with a number flag's value joined to it (`--credits=-5`): parseArgs takes
 * a value that begins with a dash for another flag and refuses it as ambiguous, where the
 * operator meant a (refused) number and should be told so, in the one line every bad
 * number gets.
 */
function joinNumberValues(args: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    if (arg.startsWith('--') && isNumberFlag(arg.slice(2)) && next?.startsWith('-')) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** The command line, or the one-line reason it cannot be read (exit code 2, with the usage). */
function parseCommandLine() {
  try {
    return parseArgs({ allowPositionals: true, options: OPTIONS, args: joinNumberValues(process.argv.slice(2)) });
  } catch (error) {
    console.error(`admin: ${(error as Error).message.replaceAll('\n', ' ')}\n\n${USAGE}`);
    process.exit(2);
  }
}

const { positionals, values } = parseCommandLine();

/**
 * A value as a refusal shows it: quoted, escaped (no control character reaches the
 * operator's terminal) and cut short, so that a hostile value cannot forge or flood the line.
 */
function shown(value: string): string {
  const characters = [...value];
  const cut = characters.length > 40 ? `${characters.slice(0, 40).join('')}…` : value;
  return JSON.stringify(cut).replace(/[\p{Cc}\p{Zl}\p{Zp}\p{Cf}]/gu, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

/**
 * A number flag's value: plain decimal digits within the flag's range, or a ValueError.
 * Number() alone would take hex, binary, octal, exponents, signs, blanks and "" (as 0),
 * and round what lies past 2^53.
 */
function count(flag: NumberFlag, required: boolean): number | undefined {
  const raw = values[flag];
  if (raw === undefined) {
    if (required) throw new UsageError(`--${flag} is required`);
    return undefined;
  }
  const max = NUMBERS[flag];
  // Digits only, and no more of them than the bound has (leading zeros aside), so Number() reads them exactly.
  const digits = /^[0-9]+$/.test(raw) ? raw.replace(/^0+(?=.)/, '') : undefined;
  const n = digits !== undefined && digits.length <= String(max).length ? Number(digits) : undefined;
  if (n === undefined || n > max) throw new ValueError(`--${flag} takes a whole number from 0 to ${max} in plain decimal digits; got ${shown(raw)}`);
  return n;
}

/** The --name given, checked as the service checks a name (domain/text.ts), or undefined. */
function name(): string | undefined {
  const raw = values.name;
  if (raw === undefined) return undefined;
  const problem = nameProblem(raw);
  if (problem) throw new ValueError(`--name ${problem}; got ${shown(raw)}`);
  return raw;
}

/** Every value the command line gives, checked before the store is opened, so that a refused one writes nothing. */
function checkValues(): void {
  for (const flag of Object.keys(NUMBERS) as NumberFlag[]) count(flag, false);
  name();
}

function text(flag: 'account' | 'key' | 'owner'): string {
  const v = values[flag];
  if (!v) throw new UsageError(`--${flag} is required`);
  return v;
}

function mode(): KeyMode {
  const m = values.mode ?? 'sandbox';
  if (m !== 'sandbox' && m !== 'live') throw new UsageError(`--mode must be sandbox or live (got "${m}")`);
  return m;
}

function print(result: Record<string, unknown>): void {
  if (values.json) console.log(JSON.stringify(result));
  else for (const [k, v] of Object.entries(result)) console.log(`${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
}

async function mustExist(store: Store, accountId: string) {
  const account = await store.accounts.getAccount(accountId);
  if (!account) throw new UsageError(`no account ${accountId}`);
  return account;
}

/** The account --owner names, which must be an owner account: a workspace holds no workspaces. */
async function mustBeOwner(store: Store): Promise<Account> {
  const owner = await mustExist(store, text('owner'));
  if (owner.ownerId !== null) throw new UsageError(`account ${owner.id} is a workspace of ${owner.ownerId}; --owner takes an owner account`);
  return owner;
}

function kind(account: Account): { account_type: 'owner' | 'workspace'; owner_account_id: string | null } {
  return { account_type: account.ownerId === null ? 'owner' : 'workspace', owner_account_id: account.ownerId };
}

/** One account as list-accounts and list-workspaces show it. */
async function listed(store: Store, account: Account, period: string) {
  const row = { account_id: account.id, ...kind(account), name: account.name, monthly_credits: account.monthlyCredits, plan: account.plan, standard_webhooks: account.standardWebhooks };
  // One account whose credits cannot be read, or are held past the bound, is reported on
  // stderr (exit code 1) and the others are listed all the same.
  try {
    const balance = await store.jobs.creditBalance(account.id, period);
    if (balance.held !== undefined) report(`account ${account.id} holds ${balance.held} credits in ${period}, past the most a month holds (${MAX_CREDITS}); they are read as ${balance.quota} until brought within it`);
    return { ...row, available: balance.available as number | null };
  } catch (error) {
    if (error instanceof StoreUnavailableError) throw error;
    report(`account ${account.id}: its credits in ${period} could not be read (${(error as Error).message.split('\n')[0]})`);
    return { ...row, available: null };
  }
}

function report(line: string): void {
  console.error(`admin: ${line}`);
  process.exitCode = 1;
}

function printRows(rows: Awaited<ReturnType<typeof listed>>[]): void {
  if (values.json) console.log(JSON.stringify(rows));
  else {
    for (const r of rows) {
      const owner = r.owner_account_id ? ` of ${r.owner_account_id}` : '';
      // A name stored before names were checked is shown escaped, never as it would act on a terminal.
      const shownName = nameProblem(r.name) ? shown(r.name) : r.name;
      console.log(`${r.account_id}  ${r.account_type}${owner}  ${shownName}  credits/month=${r.monthly_credits}  available=${r.available ?? 'unknown'}  plan=${JSON.stringify(r.plan)}${r.standard_webhooks ? '  standard-webhooks' : ''}`);
    }
  }
}

const HEADER_SETS = `${STANDARD_WEBHOOK_ID_HEADER}, ${STANDARD_WEBHOOK_TIMESTAMP_HEADER} and ${STANDARD_WEBHOOK_SIGNATURE_HEADER} (Standard Webhooks) now come beside ${WEBHOOK_EVENT_ID_HEADER}, ${WEBHOOK_TIMESTAMP_HEADER} and ${WEBHOOK_SIGNATURE_HEADER}`;

/**
 * The secret as a receiver pastes it once an account gets both header sets. A secret made
 * before secrets were standard base64 may hold `-` or `_`, which the Standard Webhooks
 * libraries refuse; X-Service-Signature stays keyed with its text, so its receivers keep
 * it, and the libraries get the same key in their alphabet until the operator rotates.
 */
function standardWebhooksSecret(account: Account): Record<string, string> {
  const secret = account.signingSecret;
  if (librariesTakeSecret(secret)) return { signing_secret: secret, note: `${HEADER_SETS}; this signing_secret, as printed, verifies both` };
  return {
    signing_secret: secret,
    standard_webhooks_secret: standardWebhookSecret(secret),
    note: `${HEADER_SETS}; this account's signing_secret predates secrets in standard base64, so X-Service-Signature verifies with signing_secret and Standard Webhooks libraries take the same key as standard_webhooks_secret; rotate-signing-secret --account ${account.id} makes one secret that verifies both as printed (every receiver then needs it)`,
  };
}

/**
 * A change to credits the store refused: one line, as a bad value gets, with the month it
 * would take past the bound. `change` is what the month would hold with it, from the
 * month's monthly credits and grants as they stand.
 */
function changedCredits(outcome: CreditsChanged, change: (monthly: number, granted: number) => string): void {
  if (outcome.ok) return;
  if (outcome.reason === 'not_found') throw new UsageError(`no account ${text('account')}`);
  throw new ValueError(
    `--credits takes at most what keeps a month within ${MAX_CREDITS} credits; got ${count('credits', true)}, with which account ${text('account')} would hold ${change(outcome.monthly, outcome.granted)} in ${outcome.period}; nothing was changed`,
  );
}

async function run(store: Store, command: string | undefined): Promise<void> {
  switch (command) {
    case 'create-account':
      print({ ...(await createAccount(store, systemClock, { name: name(), monthlyCredits: count('credits', false), mode: mode() })) });
      return;
    case 'create-workspace': {
      const owner = await mustBeOwner(store);
      print({ ...(await createWorkspace(store, systemClock, owner.id, { name: name(), monthlyCredits: count('credits', false), mode: mode() })) });
      return;
    }
    case 'issue-key':
      await mustExist(store, text('account'));
      print({ ...(await issueKey(store, systemClock, text('account'), mode())) });
      return;
    case 'revoke-key':
      if (!(await store.accounts.revokeKey(text('key'), systemClock.now()))) throw new UsageError(`no live key ${text('key')}`);
      print({ revoked: text('key') });
      return;
    case 'grant-credits': {
      // The account's month, which its credits are spent in: a sandbox clock moved into
      // another month would never see credits granted to the service's.
      const period = periodOf(accountNow({ clock: systemClock }, await mustExist(store, text('account'))));
      changedCredits(await store.accounts.grantCredits(text('account'), period, count('credits', true)!), (monthly, granted) => `${monthly} a month + ${granted} granted + ${count('credits', true)} = ${monthly + granted + count('credits', true)!}`);
      print({ account_id: text('account'), period, credits: await store.jobs.creditBalance(text('account'), period) });
      return;
    }
    case 'set-credits':
      await mustExist(store, text('account'));
      changedCredits(await store.accounts.setMonthlyCredits(text('account'), count('credits', true)!), (_monthly, granted) => `${count('credits', true)} a month + ${granted} granted = ${count('credits', true)! + granted}`);
      print({ account_id: text('account'), monthly_credits: count('credits', true) });
      return;
    case 'set-plan': {
      const account = await mustExist(store, text('account'));
      const plan: RatePlan = {
        read: { minute: count('read-per-minute', false) ?? account.plan.read.minute, day: count('read-per-day', false) ?? account.plan.read.day },
        generation: {
          minute: count('generation-per-minute', false) ?? account.plan.generation.minute,
          day: count('generation-per-day', false) ?? account.plan.generation.day,
        },
      };
      await store.accounts.setPlan(account.id, plan);
      print({ account_id: account.id, plan });
      return;
    }
    case 'rotate-signing-secret': {
      await mustExist(store, text('account'));
      const secret = generateSigningSecret();
      await store.accounts.setSigningSecret(text('account'), secret);
      print({ account_id: text('account'), signing_secret: secret });
      return;
    }
    case 'set-standard-webhooks': {
      if (values.on === values.off) throw new UsageError('give exactly one of --on and --off');
      const account = await mustExist(store, text('account'));
      await store.accounts.setStandardWebhooks(account.id, values.on);
      print({ account_id: account.id, standard_webhooks: values.on, ...(values.on ? standardWebhooksSecret(account) : {}) });
      return;
    }
    case 'list-accounts': {
      const period = periodOf(systemClock.now());
      printRows(await Promise.all((await store.accounts.listAccounts()).map((a) => listed(store, a, period))));
      return;
    }
    case 'list-workspaces': {
      const owner = await mustBeOwner(store);
      const period = periodOf(systemClock.now());
      printRows(await Promise.all([owner, ...(await store.accounts.listWorkspaces(owner.id))].map((a) => listed(store, a, period))));
      return;
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

if (values.help) {
  console.log(USAGE);
} else {
  let store: Store | undefined;
  try {
    checkValues();
    const config = loadConfig();
    // The stores' modules (drivers, the engine they name) load only once the values and
    // the settings are checked: most of a refusal's CPU was spent loading them.
    const { EMBEDDED_FILE, openStore } = await import('./runtime.ts');
    requireEmbeddedStore(config, EMBEDDED_FILE);
    store = await openStore(config, { serving: false });
    await run(store, positionals[0]);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError || error instanceof DomainError) {
      console.error(`admin: ${error.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (error instanceof StoreMissingError || error instanceof ValueError) {
      console.error(`admin: ${error.message}`);
      process.exitCode = 2;
    } else if (error instanceof SchemaMissingError) {
      console.error(`admin: ${error.message}`);
      process.exitCode = 1;
    } else if (error instanceof StoreUnavailableError) {
      console.error(`admin: ${error.message}. ${STORE_UNAVAILABLE_ADVICE}`);
      process.exitCode = 1;
    } else {
      throw error;
    }
  } finally {
    await store?.close();
  }
}
