import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describe, describeDelivery, fromService } from '../check.ts';

/** The record paths a Location of a created job points at. */
const RECORD_LOCATION = /\/v1\/(avatars|avatar-videos)\/[^/?#]+/;

export default defineProxyCheck({
  id: 'service.402-creates-nothing',
  title: 'A create answered 402 makes no record',
  asserts: 'Every create the service answered 402 carries no new job\'s ID where the implementation profile puts one, no Location of a record, and no webhook ever arrives at the address that create named: a 402 starts nothing (the runner\'s credits.402-starts-nothing).',
  party: 'service',
  clauses: ['CR-402-NO-JOB'],
  run({ traffic, shape }) {
    const refused = fromService(traffic).flatMap((seen) => {
      const kind: 'avatar' | 'avatar_video' | undefined =
        seen.method === 'POST' && seen.operationId === 'createAvatar' ? 'avatar' : seen.method === 'POST' && seen.operationId === 'createAvatarVideo' ? 'avatar_video' : undefined;
      return kind && seen.status === 402 ? [{ seen, kind }] : [];
    });
    if (refused.length === 0) notApplicable('the service refused no create with 402');
    const fix = 'Check the account\'s credits before making the job; on 402 create, reserve and schedule nothing, and answer no ID.';
    for (const { seen, kind } of refused) {
      const id = shape.createdId(kind, seen.responseJson);
      const location = seen.responseHeaders.location;
      const pointsAtRecord = location !== undefined && RECORD_LOCATION.test(location);
      if (id === undefined && !pointsAtRecord) continue;
      fail({
        clause: 'CR-402-NO-JOB',
        message: `${seen.method} ${seen.path} was answered 402 with ${id !== undefined ? `the ID ${id} of a new ${kind === 'avatar' ? 'avatar' : 'video'}` : `Location: ${location}`}`,
        expected: 'a 402 without a job: no ID, no Location of a record',
        received: `${location === undefined ? '' : `Location: ${location}; `}${seen.responseText.slice(0, 200)}`,
        fix,
        evidence: [describe(seen)],
      });
    }
    // Each create was given a webhook address of its own, so a delivery there is the event of a job the refused create started.
    const refusedSeqs = new Set(refused.map(({ seen }) => seen.seq));
    const started = traffic.deliveries.find((delivery) => refusedSeqs.has(delivery.createSeq));
    if (!started) return;
    const create = refused.find(({ seen }) => seen.seq === started.createSeq)!.seen;
    fail({
      clause: 'CR-402-NO-JOB',
      message: `webhook #${started.seq} arrived at the address that ${create.method} ${create.path} (#${create.seq}) named, which the service answered 402: the refused create started a job`,
      expected: 'no event for a create answered 402',
      received: started.rawBody.toString('utf8').slice(0, 200),
      fix,
      evidence: [describe(create), describeDelivery(started)],
    });
  },
});
