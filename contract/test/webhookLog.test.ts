// The delivery log's limit is read from the contract, and a contract that lost it is an error, not a silent default.
import { describe, expect, it } from 'vitest';
import { shownAttemptsLimit } from '../webhookLog.ts';

describe('shownAttemptsLimit', () => {
  it("is the maxItems of WebhookEvent's attempts, more than the longest retry schedule (20 attempts)", () => {
    expect(shownAttemptsLimit()).toBe(25);
  });

  it('refuses a contract that states none', () => {
    const without = { components: { schemas: { WebhookEvent: { properties: { attempts: { type: 'array' } } } } } };
    expect(() => shownAttemptsLimit(without)).toThrow(/WebhookEvent\.attempts states no maxItems/);
  });
});
