import type { FinishedRecords } from './finishedRecords.ts';
import type { KeyCache } from './keyCache.ts';
import type { Store } from './ports.ts';
import type { Clock } from './clock.ts';
import type { Account, ApiKey, CreditBalance } from './model.ts';
import type { ServiceMode } from './webhookUrl.ts';

/** What every use case needs: the store, the time, and how the service is deployed. */
export interface DomainDeps {
  store: Store;
  /** This process's key records, kept between requests (admission.ts). */
  keys: KeyCache;
  /** This process's answers of finished records, which never change (finishedRecords.ts). */
  finished: FinishedRecords;
  clock: Clock;
  /** Scheme, host and port the service's file URLs use. */
  publicBaseUrl: string;
  /** The key that signs and verifies file links (fileLinks.ts), the same in every process of the service. */
  fileLinkKey: string;
  mode: ServiceMode;
  /** Called after a job is queued, so a worker in this process can start at once. */
  onJobQueued?: () => void;
  /** Called after a terminal state recorded a webhook event, so the dispatcher sends it at once. */
  onWebhookRecorded?: () => void;
  /** Called after an account's sandbox clock moved, so waits on its time end early. */
  onClockAdvanced?: (accountId: string) => void;
  /** Called when an account's credits were read held past MAX_CREDITS (credits.ts), read as the bound: for the operator's log. */
  onCreditsOutOfRange?: (accountId: string, balance: CreditBalance) => void;
}

/** The authenticated caller: the key of the request and the account it belongs to. */
export interface Caller {
  account: Account;
  key: ApiKey;
}
