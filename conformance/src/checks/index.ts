// Every check of the runner, in the order a run executes them within each phase: quick
// request checks first (the run's jobs process meanwhile), then the checks that wait
// for jobs and webhooks, then the ones that use up a key's window, then the ones that
// only read what was recorded.
import type { Check } from '../check.ts';
import authKeyRequired from './auth/key-required.ts';
import authOtherAccountHidden from './auth/other-account-hidden.ts';
import avatarsAgeMinimum from './avatars/age-minimum.ts';
import avatarsCreateReturnsAtOnce from './avatars/create-returns-at-once.ts';
import avatarsFailedHasError from './avatars/failed-has-error.ts';
import avatarsGetReturnsRecord from './avatars/get-returns-record.ts';
import avatarsNameRequired from './avatars/name-required.ts';
import avatarsPhotoFileValidated from './avatars/photo-file-validated.ts';
import avatarsPreviewImageDecodes from './avatars/preview-image-decodes.ts';
import avatarsPromptRequired from './avatars/prompt-required.ts';
import avatarsPropsValidated from './avatars/props-validated.ts';
import avatarsTypeValidated from './avatars/type-validated.ts';
import contractBodiesMatchSchemas from './contract/bodies-match-schemas.ts';
import contractHeadersDocumented from './contract/headers-documented.ts';
import contractProblemDetails from './contract/problem-details.ts';
import contractStatusDocumented from './contract/status-documented.ts';
import credits402StartsNothing from './credits/402-starts-nothing.ts';
import creditsAccountCharged from './credits/account-charged.ts';
import creditsCost from './credits/cost.ts';
import creditsMonthlyQuota from './credits/monthly-quota.ts';
import creditsInsufficient402 from './credits/insufficient-credits-402.ts';
import creditsReadsAreFree from './credits/reads-are-free.ts';
import creditsReservedOnAccept from './credits/reserved-on-accept.ts';
import creditsWebhookFailuresChangeNothing from './credits/webhook-failures-change-nothing.ts';
import creditsWorkspaceCharged from './credits/workspace-charged.ts';
import generatedCreates from './inputs/creates.ts';
import generatedReads from './inputs/reads.ts';
import idempotencyRetryCreatesOnce from './idempotency/retry-creates-once.ts';
import listsEachRecordOnce from './lists/each-record-once.ts';
import rateLimitsBothChecks from './rate-limits/both-checks.ts';
import rateLimitsBuckets from './rate-limits/buckets.ts';
import rateLimitsCompatHeadersAgree from './rate-limits/compat-headers-agree.ts';
import rateLimitsStructuredFieldsAgree from './rate-limits/structured-fields-agree.ts';
import rateLimitsDailyWindows from './rate-limits/daily-windows.ts';
import rateLimitsHeadersOnAnswers from './rate-limits/headers-on-answers.ts';
import rateLimitsOverLimit429 from './rate-limits/over-limit-429.ts';
import rateLimitsPerKey from './rate-limits/per-key.ts';
import rateLimitsRetryAfterAdmits from './rate-limits/retry-after-admits.ts';
import rateLimitsRetryAfterOnlyOn429 from './rate-limits/retry-after-only-on-429.ts';
import statesPollingTellsFinalState from './states/polling-tells-final-state.ts';
import statesTerminalNeverChanges from './states/terminal-never-changes.ts';
import statesTransitionsDocumented from './states/transitions-documented.ts';
import versioningV1Prefix from './versioning/v1-prefix.ts';
import videosFailedHasError from './videos/failed-has-error.ts';
import videosFileLinksExpire from './videos/file-links-expire.ts';
import videosGetReturnsRecord from './videos/get-returns-record.ts';
import videosCaptionsAreWebvtt from './videos/captions-are-webvtt.ts';
import videosReadyHasUrl from './videos/ready-has-url.ts';
import videosReadyUrlAnswersRanges from './videos/ready-url-answers-ranges.ts';
import videosReadyUrlServesMp4 from './videos/ready-url-serves-mp4.ts';
import videosRequestValidated from './videos/request-validated.ts';
import videosRequireReadyAvatar from './videos/require-ready-avatar.ts';
import webhooksDeliveryLogReplay from './webhooks/delivery-log-replay.ts';
import webhooksEnvelope from './webhooks/envelope.ts';
import webhooksEventIdStable from './webhooks/event-id-stable.ts';
import webhooksEventTypeMatchesState from './webhooks/event-type-matches-state.ts';
import webhooksHttpsPublicOnly from './webhooks/https-public-only.ts';
import webhooksOptionalPerRequest from './webhooks/optional-per-request.ts';
import webhooksPayloadMatchesGet from './webhooks/payload-matches-get.ts';
import webhooksPollingAfterFailedDeliveries from './webhooks/polling-after-failed-deliveries.ts';
import webhooksRetriedAfterFailure from './webhooks/retried-after-failure.ts';
import webhooksRetrySchedule from './webhooks/retry-schedule.ts';
import webhooksSignature from './webhooks/signature.ts';
import webhooksStandardSignature from './webhooks/standard-signature.ts';
import webhooksTimestamp from './webhooks/timestamp.ts';

export const CHECKS: readonly Check[] = [
  // main: requests that cost no job
  authKeyRequired,
  avatarsTypeValidated,
  avatarsNameRequired,
  avatarsPromptRequired,
  avatarsPhotoFileValidated,
  avatarsPropsValidated,
  avatarsAgeMinimum,
  videosRequestValidated,
  webhooksHttpsPublicOnly,
  creditsInsufficient402,
  creditsReservedOnAccept,
  // main: the run's jobs
  avatarsCreateReturnsAtOnce,
  avatarsGetReturnsRecord,
  avatarsFailedHasError,
  avatarsPreviewImageDecodes,
  videosRequireReadyAvatar,
  videosGetReturnsRecord,
  videosReadyHasUrl,
  // the ready video's files, downloaded once and shared (checks/media.ts)
  videosReadyUrlServesMp4,
  videosReadyUrlAnswersRanges,
  videosCaptionsAreWebvtt,
  videosFailedHasError,
  authOtherAccountHidden,
  // main: webhooks
  webhooksEventTypeMatchesState,
  webhooksPayloadMatchesGet,
  webhooksSignature,
  webhooksStandardSignature,
  webhooksTimestamp,
  webhooksRetriedAfterFailure,
  webhooksEventIdStable,
  webhooksPollingAfterFailedDeliveries,
  webhooksOptionalPerRequest,
  webhooksEnvelope,
  // main: once everything has settled
  statesPollingTellsFinalState,
  statesTerminalNeverChanges,
  statesTransitionsDocumented,
  credits402StartsNothing,
  creditsReadsAreFree,
  creditsAccountCharged,
  creditsWebhookFailuresChangeNothing,
  creditsCost,
  // exhaust
  rateLimitsOverLimit429,
  rateLimitsBothChecks,
  rateLimitsPerKey,
  rateLimitsBuckets,
  rateLimitsRetryAfterAdmits,
  // clock: a day, the whole retry schedule, then a month, moved over with a sandbox clock
  rateLimitsDailyWindows,
  webhooksRetrySchedule,
  creditsMonthlyQuota,
  videosFileLinksExpire,
  // a workspace's job, on its own keys (not applicable without them)
  creditsWorkspaceCharged,
  // after the credit checks, on the main key: jobs of its own
  idempotencyRetryCreatesOnce,
  listsEachRecordOnce,
  webhooksDeliveryLogReplay,
  // generated: only with --fuzz, on the key without credits
  generatedCreates,
  generatedReads,
  // passive
  versioningV1Prefix,
  rateLimitsHeadersOnAnswers,
  rateLimitsCompatHeadersAgree,
  rateLimitsStructuredFieldsAgree,
  rateLimitsRetryAfterOnlyOn429,
  contractStatusDocumented,
  contractBodiesMatchSchemas,
  contractHeadersDocumented,
  contractProblemDetails,
];
