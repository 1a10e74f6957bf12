// The advice a receiver check gives when a delivery got no answer names the contract's
// webhook timeout, not how long that attempt happened to wait (a reset connection fails
// at once, and "answer within 0.0 s" helps nobody).
import { describe, expect, it } from 'vitest';
import { WEBHOOK_DELIVERY } from '../../contract/numbers.ts';
import { expectRefused } from '../src/receiver-checks/check.ts';
import { formatSeconds } from '../src/receiver-checks/sender.ts';
import { CheckFailure } from '../src/outcome.ts';

describe('the advice after a delivery got no answer', () => {
  it.each([
    ['a reset connection', 0],
    ['a timeout of the run', 2500],
  ])('when it was %s, then the fix names the contract\'s webhook timeout', (reason, ms) => {
    const delivery = { label: 'a delivery signed with another secret', body: Buffer.from('{}'), headers: [] as [string, string][] };
    let failure: unknown;
    try {
      expectRefused({ delivery, answer: { kind: 'no-answer', reason, ms, refused: ms === 0 } }, 'WH-SIGNATURE', 'a receiver must refuse it', 'verify the signature');
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(CheckFailure);
    const fix = (failure as CheckFailure).detail.fix;
    expect(fix).toContain(`answer every delivery within ${formatSeconds(WEBHOOK_DELIVERY.timeoutSeconds * 1000)} (the contract's webhook timeout`);
    expect(fix).not.toContain(formatSeconds(ms));
  });
});
