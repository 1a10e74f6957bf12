// Every proxy check, in the order reports list them: the client's first (what the proxy
// is mostly run for), then what the service's answers and webhooks show.
import type { ProxyCheck } from './check.ts';
import clientPollsBackOff from './checks/client-polls-back-off.ts';
import clientVideoAfterReady from './checks/client-video-after-ready.ts';
import clientWaitsRetryAfter from './checks/client-waits-retry-after.ts';
import service402CreatesNothing from './checks/service-402-creates-nothing.ts';
import serviceCompatHeadersAgree from './checks/service-compat-headers-agree.ts';
import serviceFailedHasError from './checks/service-failed-has-error.ts';
import serviceGetReturnsRecord from './checks/service-get-returns-record.ts';
import serviceInsufficientCredits402 from './checks/service-insufficient-credits-402.ts';
import serviceOverLimit429 from './checks/service-over-limit-429.ts';
import serviceRateLimitHeaders from './checks/service-rate-limit-headers.ts';
import serviceReadyVideoHasUrl from './checks/service-ready-video-has-url.ts';
import serviceRetryAfterOnlyOn429 from './checks/service-retry-after-only-on-429.ts';
import serviceTerminalNeverChanges from './checks/service-terminal-never-changes.ts';
import serviceWebhookEventType from './checks/service-webhook-event-type.ts';
import serviceWebhookPayloadMatchesGet from './checks/service-webhook-payload-matches-get.ts';
import serviceWebhookSignature from './checks/service-webhook-signature.ts';
import serviceWebhookTimestamp from './checks/service-webhook-timestamp.ts';

export const PROXY_CHECKS: readonly ProxyCheck[] = [
  clientWaitsRetryAfter,
  clientPollsBackOff,
  clientVideoAfterReady,
  serviceRateLimitHeaders,
  serviceCompatHeadersAgree,
  serviceRetryAfterOnlyOn429,
  serviceOverLimit429,
  serviceInsufficientCredits402,
  service402CreatesNothing,
  serviceGetReturnsRecord,
  serviceReadyVideoHasUrl,
  serviceFailedHasError,
  serviceTerminalNeverChanges,
  serviceWebhookSignature,
  serviceWebhookTimestamp,
  serviceWebhookPayloadMatchesGet,
  serviceWebhookEventType,
];
