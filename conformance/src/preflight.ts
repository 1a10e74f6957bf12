// Before any check: is there a service at the base URL, does it take the keys, and is
// it this API at all? Each "no" ends the run with a one-line diagnosis and its own
// exit code instead of forty failed checks.
import { type Exchange, type Http, type KeyName, UnreachableError } from './http.ts';
import type { Shape } from './implementation/shape.ts';
import type { ResolvedOptions } from './options.ts';
import type { AbortKind } from './report/model.ts';
import { isJson } from './world.ts';

export interface PreflightAbort {
  kind: AbortKind;
  message: string;
}

const FLAG: Record<KeyName, string> = { main: '--api-key', second: '--second-key', empty: '--empty-key', workspace: '--workspace-key', owner: '--owner-key' };

/** Credits the run's own jobs need at these prices: four avatars and two videos. */
export function creditsFor(prices: { avatar: number; avatar_video: number }): number {
  return 4 * prices.avatar + 2 * prices.avatar_video;
}

/** Credits the run's own jobs need at the implementation's prices; undefined when the prices are not known. */
export function creditsNeeded(shape: Shape): number | undefined {
  const avatar = shape.price('avatar');
  const video = shape.price('avatar_video');
  return avatar === undefined || video === undefined ? undefined : creditsFor({ avatar, avatar_video: video });
}

export async function preflight(http: Http, keys: KeyName[], options: Pick<ResolvedOptions, 'profile' | 'baseUrl'>, shape: Shape): Promise<PreflightAbort | undefined> {
  const { baseUrl } = options;
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
      const [header] = shape.credential('');
      return { kind: 'rejected-key', message: `the service refused ${FLAG[key]} (GET /v1/me answered ${exchange.status}); check the key, that it belongs to this deployment, and that the service reads it from ${header}` };
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
  if (options.profile === 'mock') return undefined;

  const main = shape.accountId(answers.get('main')?.json);
  for (const key of ['second', 'empty'] as const) {
    if (answers.has(key) && main && shape.accountId(answers.get(key)?.json) === main) {
      return { kind: 'usage', message: `${FLAG[key]} belongs to the same account as --api-key (${main}); it must be another account's key` };
    }
  }
  const empty = shape.balance(answers.get('empty'));
  if (empty?.available !== undefined && empty.available >= (shape.price('avatar') ?? 1)) {
    return { kind: 'usage', message: `--empty-key's account has ${empty.available} credits available; it must have fewer than one avatar's cost for the 402 checks` };
  }
  const needed = creditsNeeded(shape);
  const credits = shape.balance(answers.get('main'));
  if (credits?.available !== undefined && needed !== undefined && credits.available < needed) {
    return { kind: 'usage', message: `--api-key's account has ${credits.available} credits available; a run needs ${needed}` };
  }
  return undefined;
}
