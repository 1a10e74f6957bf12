// Before any check: is there a service at the base URL, does it take the keys, and is
// it this API at all? Each "no" ends the run with a one-line diagnosis and its own
// exit code instead of forty failed checks.
import type { Profile } from './check.ts';
import { type Exchange, type Http, type KeyName, UnreachableError } from './http.ts';
import type { AbortKind } from './report/model.ts';
import { balanceOf, isJson } from './world.ts';

export interface PreflightAbort {
  kind: AbortKind;
  message: string;
}

const FLAG: Record<KeyName, string> = { main: '--api-key', second: '--second-key', empty: '--empty-key' };

/** Credits the run's own jobs need: four avatars at 10 and two videos at 20 (ND-CREDIT-COST). */
export const CREDITS_NEEDED = 80;

export async function preflight(http: Http, keys: KeyName[], profile: Profile, baseUrl: string): Promise<PreflightAbort | undefined> {
  const answers = new Map<KeyName, Exchange>();
  for (const key of keys) {
    let exchange: Exchange;
    try {
      exchange = await http.send({ key, method: 'GET', path: '/v1/me', note: 'preflight' });
    } catch (error) {
      if (error instanceof UnreachableError) {
        return { kind: 'unreachable', message: `cannot reach ${baseUrl}: ${error.message.replace(/^GET \/v1\/me: /, '')}` };
      }
      throw error;
    }
    if (exchange.status === 401 || exchange.status === 403) {
      return { kind: 'rejected-key', message: `the service refused ${FLAG[key]} (GET /v1/me answered ${exchange.status}); check the key and that it belongs to this deployment` };
    }
    if (exchange.status !== 200 || !isJson(exchange.json)) {
      const type = exchange.responseHeaders['content-type']?.split(';')[0] ?? 'no content type';
      const hint = /\/v1\/?$/.test(baseUrl) ? ' (the base URL must not end in /v1)' : '';
      return {
        kind: 'not-this-api',
        message: `${baseUrl} does not look like the Avatar Service API: GET /v1/me answered ${exchange.status} ${type}, not a JSON account${hint}`,
      };
    }
    answers.set(key, exchange);
  }
  if (profile === 'mock') return undefined;

  const account = (key: KeyName) => {
    const json = answers.get(key)?.json;
    return isJson(json) && typeof json.account_id === 'string' ? json.account_id : undefined;
  };
  const main = account('main');
  for (const key of ['second', 'empty'] as const) {
    if (answers.has(key) && main && account(key) === main) {
      return { kind: 'usage', message: `${FLAG[key]} belongs to the same account as --api-key (${main}); it must be another account's key` };
    }
  }
  const empty = balanceOf(answers.get('empty'));
  if (empty && empty.available >= 10) {
    return { kind: 'usage', message: `--empty-key's account has ${empty.available} credits available; it must have fewer than one avatar's cost for the 402 checks` };
  }
  const credits = balanceOf(answers.get('main'));
  if (credits && credits.available < CREDITS_NEEDED) {
    return { kind: 'usage', message: `--api-key's account has ${credits.available} credits available; a run needs ${CREDITS_NEEDED}` };
  }
  return undefined;
}
