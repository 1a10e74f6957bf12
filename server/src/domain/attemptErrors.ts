// Why a webhook attempt failed, as the delivery log tells it (ND-WEBHOOK-LOG): in
// categories an account can act on, never the network's own words. A raw error names
// the address and port it tried and echoes what answered there (a banner, a parse
// error, an internal DNS answer), which would make the log a port scanner of the
// service's network. The sender records the category's sentence; the log reads the
// category back from it, and from the raw texts that older attempts kept.

/** The categories, in the order the contract lists them (`WebhookAttempt.error_code`). */
export const ATTEMPT_ERROR_CODES = [
  'receiver_status',
  'timeout',
  'connection_refused',
  'connection_failed',
  'name_not_found',
  'tls_failure',
  'invalid_response',
  'refused_by_policy',
  'account_closed',
] as const;

export type AttemptErrorCode = (typeof ATTEMPT_ERROR_CODES)[number];

/** The sentence of each category but the receiver's status, whose sentence names the status. */
const SENTENCES: Record<Exclude<AttemptErrorCode, 'receiver_status'>, string> = {
  timeout: 'the receiver did not answer within the time limit',
  connection_refused: 'the receiver refused the connection (nothing listens at that port)',
  connection_failed: 'the connection failed before an answer (reset, or the network or host unreachable)',
  name_not_found: 'the host name was not found in DNS',
  tls_failure: 'the TLS handshake failed (a certificate that is expired, untrusted or for another name, or no TLS at that port)',
  invalid_response: 'the receiver answered with something that is not HTTP',
  refused_by_policy: 'the URL\'s host is not allowed as a webhook target; not retried',
  account_closed: 'the account no longer exists',
};

/** The sentence recorded for an attempt that failed with `code` (and the receiver's `status`, if it answered). */
export function attemptErrorText(code: AttemptErrorCode, status: number | null): string {
  if (code !== 'receiver_status') return SENTENCES[code];
  return status !== null && status >= 300 && status < 400 ? `redirect ${status} not followed` : `status ${status}`;
}

const BY_SENTENCE = new Map<string, AttemptErrorCode>(Object.entries(SENTENCES).map(([code, sentence]) => [sentence, code as AttemptErrorCode]));

/**
 * The category of a recorded failure: a sentence written by `attemptErrorText`, or the
 * raw text an attempt recorded before the categories (read by what it starts with or
 * names). Anything else is a failed connection: the one category that promises nothing.
 */
export function attemptErrorCode(recorded: string, status: number | null): AttemptErrorCode {
  const known = BY_SENTENCE.get(recorded);
  if (known) return known;
  if (status !== null || /^(status \d{3}|redirect \d{3})/.test(recorded)) return 'receiver_status';
  if (/^no answer within|ETIMEDOUT|timed? ?out/i.test(recorded)) return 'timeout';
  if (/^refused:|^invalid URL/.test(recorded)) return 'refused_by_policy';
  if (/ECONNREFUSED/.test(recorded)) return 'connection_refused';
  if (/DNS lookup failed|ENOTFOUND|EAI_AGAIN|has no address/.test(recorded)) return 'name_not_found';
  if (/certificate|CERT_|SSL|TLS|EPROTO/i.test(recorded)) return 'tls_failure';
  if (/Parse Error|HPE_/.test(recorded)) return 'invalid_response';
  if (/account no longer exists/.test(recorded)) return 'account_closed';
  return 'connection_failed';
}

/** What the log shows of a failed attempt: its category and the category's sentence, never the recorded text itself. */
export function shownAttemptError(recorded: string, status: number | null): { code: AttemptErrorCode; message: string } {
  const code = attemptErrorCode(recorded, status);
  return { code, message: attemptErrorText(code, status) };
}
