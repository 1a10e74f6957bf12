/**
 * With a sandbox key, an avatar name or a video script containing this marker makes the
 * job end `failed` with `sandbox_forced_failure` (ND-SANDBOX-FAILURE): the built-in
 * engine honours it and the conformance runner uses it to observe failures.
 */
export const SANDBOX_FAILURE_MARKER = '[sandbox:fail]';
