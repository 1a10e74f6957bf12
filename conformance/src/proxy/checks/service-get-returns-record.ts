import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describe, fromService, recordRead } from '../check.ts';

export default defineProxyCheck({
  id: 'service.get-returns-record',
  title: 'A GET of an avatar or video answers that record, with its id',
  asserts: 'Every successful GET /v1/avatars/{id} or /v1/avatar-videos/{id} the service answered is a record whose id is the ID the path asked for.',
  party: 'service',
  clauses: ['AV-GET', 'VID-GET'],
  run({ traffic, shape }) {
    const reads = fromService(traffic).filter((seen) => recordRead(seen) !== undefined && seen.status >= 200 && seen.status < 300);
    if (reads.length === 0) notApplicable('no avatar or video was read successfully');
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
