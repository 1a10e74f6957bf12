// The largest JSON request body a service takes (ND-ERRORS: a larger one is refused 413
// payload_too_large, as the contract's 413 responses say: "larger than 64 KiB"). One
// home for the number: the service refuses past it, and the conformance proxy, which
// must read a create's body to route its webhook, stops reading there and refuses it
// the same way rather than holding whatever a client sends.
export const MAX_JSON_BODY_BYTES = 64 * 1024;

/** The detail of the 413, as the service writes it. */
export function bodyTooLargeDetail(): string {
  return `The request body is larger than ${MAX_JSON_BODY_BYTES} bytes.`;
}
