import { defineCheck } from '../../check.ts';
import { contractViolations } from '../../observe/violations.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'contract.bodies-match-schemas',
  title: 'Every body has a documented media type and matches its schema',
  asserts: 'Contract only: every answer\'s body matches the schema the contract documents for its operation and status.',
  clauses: [],
  decisions: ['ND-AVATAR-FIELDS', 'ND-VIDEO-FIELDS', 'ND-ME', 'ND-ERROR-BODY'],
  profiles: ['contract', 'mock'],
  phase: 'passive',
  async run(ctx) {
    const found = contractViolations(ctx, ['body', 'content-type']);
    if (found.length > 0) {
      fail({ clause: 'ND-ERROR-BODY', message: `${found.length} answers do not match the documented schema: ${found[0]!.message}`, expected: 'bodies valid against generated/openapi.json', received: found.slice(0, 5).map((v) => v.message).join('; '), fix: 'Serialize records and problems exactly as the schemas say.', exchanges: found.slice(0, 3).map((v) => v.exchange) });
    }
  },
});
