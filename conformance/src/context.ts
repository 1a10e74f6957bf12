// What a check gets to work with: the profile, the HTTP layer, a typed client per key,
// the shared jobs of the run, the webhook receiver and the contract.
import type { AvatarClient } from '../../client/src/index.ts';
import { CheckSkip, type Check, type Profile } from './check.ts';
import type { ContractValidator } from './contract.ts';
import type { Http, KeyName } from './http.ts';
import type { ResolvedOptions } from './options.ts';
import type { WebhookReceiver } from './receiver/server.ts';
import type { World } from './world.ts';

export interface CheckContext {
  check: Check;
  profile: Profile;
  /** The contract's decisions are in force (contract profile): stricter expectations. */
  contract: boolean;
  /** The implementation runs in sandbox mode (every profile but production). */
  sandbox: boolean;
  options: ResolvedOptions;
  http: Http;
  clients: Partial<Record<KeyName, AvatarClient>>;
  world: World;
  /** Present when webhooks can reach the runner. */
  receiver: WebhookReceiver | undefined;
  validator: ContractValidator;
  /** Memoised work shared between checks (e.g. the exhausted key). */
  once<T>(name: string, work: () => Promise<T>): Promise<T>;
  hasKey(key: KeyName): boolean;
  /** A key for requests that are refused before credits count: the one with most room. */
  validationKey(): KeyName;
  note(message: string): void;
  now(): number;
  sleep(ms: number): Promise<void>;
}

export function skip(reason: string): never {
  throw new CheckSkip('skipped', reason);
}

export function notApplicable(reason: string): never {
  throw new CheckSkip('not_applicable', reason);
}

/** A shared job or request that a check builds on could not be made. */
export class PrerequisiteError extends Error {
  override name = 'PrerequisiteError';
}
