import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describe, fromService, recordRead } from '../check.ts';

export default defineProxyCheck({
  id: 'service.get-returns-record',
  title: 'A create answers the new ID, and a GET of an avatar or video answers that record with its id',
  asserts:
    'Every create the service accepted (a success status of the implementation profile) carries the new job\'s ID where the profile says, and every successful GET /v1/avatars/{id} or /v1/avatar-videos/{id} is a record whose id is the ID the path asked for.',
  party: 'service',
  clauses: ['AV-GET', 'VID-GET'],
  run({ traffic, shape }) {
    const answers = fromService(traffic);
    const creates = answers.flatMap((seen) => {
      const kind: 'avatar' | 'avatar_video' | undefined =
        seen.method === 'POST' && seen.operationId === 'createAvatar' ? 'avatar' : seen.method === 'POST' && seen.operationId === 'createAvatarVideo' ? 'avatar_video' : undefined;
      return kind && shape.isCreated(kind, seen.status) ? [{ seen, kind }] : [];
    });
    const reads = answers.filter((seen) => recordRead(seen) !== undefined && seen.status >= 200 && seen.status < 300);
    if (creates.length === 0 && reads.length === 0) notApplicable('no avatar or video was created or read successfully');
    for (const { seen, kind } of creates) {
      if (shape.createdId(kind, seen.responseJson) !== undefined) continue;
      fail({
        clause: kind === 'avatar' ? 'AV-GET' : 'VID-GET',
        message: `${seen.method} ${seen.path} accepted the ${kind === 'avatar' ? 'avatar' : 'video'} (${seen.status}) without its ID where the implementation profile says (${shape.profile.create[kind === 'avatar' ? 'avatar' : 'video'].id})`,
        expected: 'the new job\'s ID, to read it by',
        received: seen.responseText.slice(0, 200),
        fix: 'Answer an accepted create with the new job\'s ID.',
        evidence: [describe(seen)],
      });
    }
    for (const seen of reads) {
      const { kind, id } = recordRead(seen)!;
      const shown = shape.recordId(seen.responseJson);
      if (shown === id) continue;
      fail({
        clause: kind === 'avatar' ? 'AV-GET' : 'VID-GET',
        message: `GET ${seen.path} answered ${shown === undefined ? 'without an id' : `the record ${shown}`}`,
        expected: `a record with "id": "${id}"`,
        received: seen.responseText.slice(0, 200),
        fix: 'Answer the record itself, with its id, as the create answer named it.',
        evidence: [describe(seen)],
      });
    }
  },
});
