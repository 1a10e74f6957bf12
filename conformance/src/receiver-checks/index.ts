// Every receiver check, in the order a receiver run executes them: authentic events
// first (a receiver that refuses everything fails there, not in the refusals), then
// forgeries, then what a sender may do to authentic events (another form, duplicates,
// any order).
import type { ReceiverCheck } from './check.ts';
import anyOrderAcrossJobs from './checks/any-order-across-jobs.ts';
import duplicatesAcknowledged from './checks/duplicates-acknowledged.ts';
import eachEventTypeAccepted from './checks/each-event-type-accepted.ts';
import rawBodyVerified from './checks/raw-body-verified.ts';
import signatureVerified from './checks/signature-verified.ts';
import timestampChecked from './checks/timestamp-checked.ts';

export const RECEIVER_CHECKS: readonly ReceiverCheck[] = [
  eachEventTypeAccepted,
  signatureVerified,
  timestampChecked,
  rawBodyVerified,
  duplicatesAcknowledged,
  anyOrderAcrossJobs,
];
