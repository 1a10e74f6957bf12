// How a secret is shown wherever one could be written down: the runner's reports and the
// service's logs. An API key (sk_test_…, sk_live_…) or a signing secret (whsec_…) keeps
// only its prefix, which says what it was without giving it away. The runner knows the
// secrets it was given and redacts those; the service keeps keys hashed and knows none,
// so it redacts anything shaped like one, wherever a client put it (path, query, header
// or body), percent-encoded too.

/** A secret as shown: its prefix and "…(redacted)". */
export function redacted(secret: string): string {
  const prefix = /^(sk_(?:test|live)_|whsec_)/.exec(secret)?.[1] ?? '';
  return `${prefix}…(redacted)`;
}

/** Replaces every occurrence of each of `secrets` (those of 6 characters or more: a shorter one would blank ordinary text) with its redacted form. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 6) continue;
    out = out.split(secret).join(redacted(secret));
  }
  return out;
}

// A key's characters are base64url, a signing secret's base64 in either alphabet; a
// prefix followed by none of them is not a secret and is left as it is.
const SECRET_SHAPES = /(?:sk_(?:test|live)_[A-Za-z0-9_-]+|whsec_[A-Za-z0-9+/=_-]+)/g;
const PERCENT_ENCODED = /(?:%[0-9A-Fa-f]{2})+/g;

/**
 * Replaces everything shaped like an API key or a signing secret, known or not, with its
 * redacted form. A client may percent-encode what it sends (`sk%5Ftest%5F…`): a text
 * whose decoded form holds a secret is returned decoded, redacted, since its encoded
 * form would carry the secret past any pattern.
 */
export function redactSecretShapes(text: string): string {
  // Decoded first: a secret's own escapes (a signing secret's %2F) would otherwise end its
  // match early and leave the rest of it in the line.
  const decoded = text.includes('%') ? text.replace(PERCENT_ENCODED, decodeOrKeep) : text;
  if (decoded !== text) {
    const shown = decoded.replace(SECRET_SHAPES, redacted);
    if (shown !== decoded) return shown;
  }
  return text.replace(SECRET_SHAPES, redacted);
}

/** A run of percent-escapes decoded, or kept as it is when it is not UTF-8. */
function decodeOrKeep(escapes: string): string {
  try {
    return decodeURIComponent(escapes);
  } catch {
    return escapes;
  }
}
