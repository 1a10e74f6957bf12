// What a receiver check is: the runner plays the sender, delivers events to the
// receiver under test and judges its answers. Same parts as a service check (ID, what it
// asserts, clauses, run) with a context of its own: the sender and the events, no API.
import type { ClauseId, DecisionId } from '../clauses.ts';
import type { ImplementationProfile } from '../implementation/profile.ts';
import { WEBHOOK_DELIVERY } from '../../../contract/numbers.ts';
import { fail } from '../outcome.ts';
import type { Event, EventFactory, EventType } from './events.ts';
import { type Answer, describeExchange, formatSeconds, type Delivery, type Sender, type SignOptions } from './sender.ts';

export interface ReceiverContext {
  sender: Sender;
  events: EventFactory;
  profile: ImplementationProfile;
  /** The receiver's tolerance for a timestamp's age, as the run was told (--tolerance). */
  toleranceSeconds: number;
  /** Delivers and returns the answer; counted for the run's report. */
  deliver(event: Event, options: SignOptions): Promise<{ delivery: Delivery; answer: Answer }>;
  /** Sends a delivery again byte for byte, headers and all. */
  resend(delivery: Delivery, label: string): Promise<{ delivery: Delivery; answer: Answer }>;
  note(message: string): void;
}

export interface ReceiverCheck {
  /** `receiver.<behaviour>`: stable, reports and --only refer to it. */
  id: string;
  title: string;
  /** What holding means, as seen from the sender's side. */
  asserts: string;
  clauses: readonly ClauseId[];
  decisions?: readonly DecisionId[];
  /** The most deliveries it makes: the run's bound is stated from it before anything is sent. */
  deliveries: number;
  run(ctx: ReceiverContext): Promise<void>;
}

export function defineReceiverCheck(check: ReceiverCheck): ReceiverCheck {
  return check;
}

/** The one event type each kind of job ends with, for checks that need one job's event. */
export const AVATAR_READY: EventType = 'avatar.ready';

function isAccepted(answer: Answer): boolean {
  return answer.kind === 'answered' && answer.status >= 200 && answer.status < 300;
}

function received(answer: Answer): string {
  return answer.kind === 'answered' ? `${answer.status}${answer.body ? ` ${answer.body.slice(0, 120)}` : ''}` : answer.reason;
}

/** The receiver acknowledged it (2xx); anything else fails the check with the clause and a fix. */
export function expectAccepted(exchange: { delivery: Delivery; answer: Answer }, clause: ClauseId, why: string, fix: string): void {
  const { delivery, answer } = exchange;
  if (isAccepted(answer)) return;
  fail({
    clause,
    message: `${delivery.label} was not acknowledged: ${answer.kind === 'answered' ? `it got ${answer.status}` : answer.reason}; ${why}`,
    expected: 'a 2xx answer',
    received: received(answer),
    fix,
    evidence: [describeExchange(delivery, answer)],
  });
}

/** The receiver refused it (any non-2xx); an answer that never came says nothing either way. */
export function expectRefused(exchange: { delivery: Delivery; answer: Answer }, clause: ClauseId, why: string, fix: string): void {
  const { delivery, answer } = exchange;
  if (answer.kind === 'no-answer') {
    fail({
      clause,
      message: `${delivery.label} got no answer (${answer.reason}), so whether the receiver refused it cannot be told; ${why}`,
      expected: 'a non-2xx answer within the time a request is given',
      received: answer.reason,
      // The contract's limit, not how long this attempt waited: a reset connection fails at once.
      fix: `answer every delivery within ${formatSeconds(WEBHOOK_DELIVERY.timeoutSeconds * 1000)} (the contract's webhook timeout: a sender gives up then); refuse this one with 400 or 401`,
      evidence: [describeExchange(delivery, answer)],
    });
  }
  if (!isAccepted(answer)) return;
  fail({ clause, message: `${delivery.label} was acknowledged with ${answer.status}; ${why}`, expected: 'a non-2xx answer (400 or 401)', received: received(answer), fix, evidence: [describeExchange(delivery, answer)] });
}
