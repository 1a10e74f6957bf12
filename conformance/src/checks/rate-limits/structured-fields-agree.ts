import { RATE_LIMIT_DRAFT } from '../../../../contract/rateLimitFields.ts';
import { ALL, defineCheck } from '../../check.ts';
import type { RateLimitFields } from '../../implementation/profile.ts';
import { describeStructuredFields, judgeStructuredFields, limitedAnswers } from '../../observe/rate-limit-headers.ts';
import { fail, notApplicable } from '../../outcome.ts';

export default defineCheck({
  id: 'rate-limits.structured-fields-agree',
  title: 'RateLimit-Policy and RateLimit, where sent, read as the IETF draft says and agree with RateLimit-*',
  asserts:
    'Where the implementation claims the IETF draft\'s structured fields (rate_limits.fields in its profile: ietf-draft-11, as this project\'s contract does, or ietf-draft-10, which writes them alike and is read alike) and sends them, on every success and 429 that carries them: RateLimit-Policy and RateLimit are RFC 9651 Lists of Strings with Integer q (and positive w), r (and t) parameters, read by an RFC 9651 parser; and they say what RateLimit-Limit, -Remaining and -Reset say (a member of RateLimit with the trio\'s Remaining and Reset, naming a listed policy whose q is the Limit; none leaving more than its quota or resetting later than its window). Not applicable when no answer carries them, and outside the contract and mock profiles when the implementation profile claims no such fields: the source does not name them, so a RateLimit-Policy or RateLimit in another form (an earlier draft\'s) is not this implementation\'s claim to judge.',
  clauses: [],
  decisions: ['ND-RATELIMIT-FIELDS'],
  profiles: ALL,
  // The source's trio is what a service owes; these fields are the draft's, on top of it,
  // judged where an implementation claims them. A mock's examples decide nothing.
  notRequiredIn: ['core', 'production'],
  optionalIn: ['mock'],
  phase: 'passive',
  async run(ctx) {
    // The contract and a mock of it claim its revision's fields; another implementation only where its profile says so.
    const revision = ctx.contract || ctx.profile === 'mock' ? RATE_LIMIT_DRAFT : claimedDraft(ctx.shape.profile.rateLimits.fields);
    if (revision === null) notApplicable('the implementation profile claims no structured rate-limit fields (rate_limits.fields); RateLimit-Policy and RateLimit are not the source\'s, so whatever it sends of them is not judged');
    const answers = limitedAnswers(ctx.http.log);
    // The mock answers its examples: fixed numbers that describe no window, so only their syntax is judged.
    const agreement = ctx.profile !== 'mock';
    const judged = answers.map((exchange) => ({ exchange, verdict: judgeStructuredFields(exchange.responseHeaders, agreement) }));
    const sent = judged.filter((j) => j.verdict.sent);
    if (sent.length === 0) notApplicable('no success or 429 carried RateLimit-Policy or RateLimit (the IETF draft\'s fields, which the source does not name)');
    const offenders = sent.filter((j) => j.verdict.sent && j.verdict.problem !== null);
    if (offenders.length > 0) {
      const first = offenders[0]!;
      const verdict = first.verdict as { problem: string; rule: 'syntax' | 'agreement' };
      fail({
        clause: 'ND-RATELIMIT-FIELDS',
        message: `${offenders.length} of ${sent.length} answers with RateLimit-Policy or RateLimit ${verdict.rule === 'syntax' ? `do not read as the draft says (${revision}, as claimed)` : 'say otherwise than RateLimit-*'}: ${verdict.problem}`,
        expected: 'RateLimit-Policy: "minute";q=<Limit>;w=<window s>, ... and RateLimit: "minute";r=<Remaining>;t=<Reset> (RFC 9651 Lists; the trio\'s figures)',
        received: describeStructuredFields(first.exchange.responseHeaders),
        fix: 'Send RateLimit-Policy with a quoted name, q and w for each window, and RateLimit naming the active window with r = RateLimit-Remaining and t = RateLimit-Reset, both taken from the same count as the trio.',
        exchanges: offenders.slice(0, 3).map((o) => o.exchange),
      });
    }
  },
});

/** The draft a profile's claim names (`ietf-draft-11` -> draft-ietf-httpapi-ratelimit-headers-11), or null: none claimed. */
function claimedDraft(fields: RateLimitFields | null): string | null {
  return fields === null ? null : `draft-ietf-httpapi-ratelimit-headers-${fields.slice('ietf-draft-'.length)}`;
}
