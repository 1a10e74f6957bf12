// What a check gets to work with: the rule profile, the implementation's shape, the
// HTTP layer, the shared jobs of the run, the webhook receiver and the contract.
import type { SandboxClock } from './clock.ts';
import type { ContractValidator } from './contract.ts';
import type { Http, KeyName } from './http.ts';
import type { Shape } from './implementation/shape.ts';
import type { ResolvedOptions } from './options.ts';
import type { Profile } from './outcome.ts';
import type { Receiver } from './receiver/server.ts';
import type { Stalls } from './stalls.ts';
import type { World } from './world.ts';

export interface CheckContext {
  /** The ID of the check this context was made for (labels, notes). */
  checkId: string;
  profile: Profile;
  /** The contract's decisions are in force (contract profile): stricter expectations. */
  contract: boolean;
  /** The implementation runs in sandbox mode (every profile but production). */
  sandbox: boolean;
  /** How the implementation made the source's "not shown" choices: read everything through it. */
  shape: Shape;
  options: ResolvedOptions;
  http: Http;
  world: World;
  /** Present when webhooks can reach the runner. */
  receiver: Receiver | undefined;
  validator: ContractValidator;
  /** The implementation's sandbox clock; `clock.has(key)` says whether a key's account can move its time. */
  clock: SandboxClock;
  /** The runner's own stalls: what of an interval it measured was its lateness, not the implementation's. */
  stalls: Stalls;
  /** Memoised work shared between checks (e.g. the exhausted key). */
  once<T>(name: string, work: () => Promise<T>): Promise<T>;
  hasKey(key: KeyName): boolean;
  /** A key for requests that are refused before credits count: the one with most room. */
  validationKey(): KeyName;
  note(message: string): void;
  now(): number;
  /**
   * This check's limit (bound.ts): `signal` aborts when it is reached or the run's bound
   * is. `http`, `receiver` and `sleep` above already end their waits then, with
   * LimitReached; other waits of the check should take the signal too.
   */
  deadline: { signal: AbortSignal; limitSeconds: number };
  sleep(ms: number): Promise<void>;
}
