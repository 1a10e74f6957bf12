// Admitting a request while its account changes (AUTH-KEY, RL-*): a key record kept from an
// earlier request is checked against the account's version as the request is counted; a
// record read for the request itself is counted as read. A change moves the version before
// and after its commit, so a request racing one change sees the version move twice.
import { describe, expect, it } from 'vitest';
import { createAccount } from '../../src/domain/accounts.ts';
import { admit } from '../../src/domain/admission.ts';
import type { DomainDeps } from '../../src/domain/deps.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { createFinishedRecords } from '../../src/domain/finishedRecords.ts';
import { createKeyCache } from '../../src/domain/keyCache.ts';
import { createMemoryStore } from '../../src/storage/memory/index.ts';
import { fakeClock } from '../support/clock.ts';

/** A memory store whose account changes (`change`) run just before every count, as a change racing the request would; reads of keys are counted. */
async function racedDeps(change: (store: ReturnType<typeof createMemoryStore>, accountId: string) => Promise<unknown>) {
  const store = createMemoryStore();
  const clock = fakeClock(Date.UTC(2026, 10, 2, 9, 0, 0));
  const deps: DomainDeps = { store, keys: createKeyCache(), finished: createFinishedRecords(), clock, publicBaseUrl: 'http://127.0.0.1:1', fileLinkKey: 'test-link-key', mode: 'sandbox' };
  const account = await createAccount(store, clock, {});
  let racing = false;
  let keyReads = 0;
  const consume = store.rateLimits.consume.bind(store.rateLimits);
  store.rateLimits.consume = async (who, bucket, limits, now) => {
    if (racing) await change(store, account.account_id);
    return consume(who, bucket, limits, now);
  };
  const findKeyByHash = store.accounts.findKeyByHash.bind(store.accounts);
  store.accounts.findKeyByHash = async (hash) => {
    keyReads++;
    return findKeyByHash(hash);
  };
  return {
    deps,
    account,
    race: () => (racing = true),
    keyReads: () => keyReads,
  };
}

describe('admitting a request while its account changes', () => {
  it('when the account changes before every count and the kept record is stale, then the request is admitted on the record read for it, with one read', async () => {
    const { deps, account, race, keyReads } = await racedDeps((store, id) => store.accounts.setStandardWebhooks(id, true));
    await admit(deps, account.api_key, 'read'); // keeps the record
    race();
    const readsBefore = keyReads();

    const admitted = await admit(deps, account.api_key, 'read');

    expect(admitted?.refusal).toBeNull();
    expect(admitted?.caller.account.id).toBe(account.account_id);
    expect(keyReads() - readsBefore).toBe(1);
  });

  it('when the kept record is stale because the key was revoked, then the key is read again and refused 401', async () => {
    const { deps, account } = await racedDeps(async () => undefined);
    await admit(deps, account.api_key, 'read');
    await deps.store.accounts.revokeKey(account.key_id, deps.clock.now());

    const refused = await admit(deps, account.api_key, 'read').catch((error: unknown) => error);

    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('unauthorized');
  });

  it('when the kept record is current, then the store is not read', async () => {
    const { deps, account, keyReads } = await racedDeps(async () => undefined);
    await admit(deps, account.api_key, 'read');
    const readsBefore = keyReads();

    const admitted = await admit(deps, account.api_key, 'read');

    expect(admitted?.refusal).toBeNull();
    expect(keyReads() - readsBefore).toBe(0);
  });
});
