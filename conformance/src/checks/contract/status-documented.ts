import { defineCheck } from '../../check.ts';
import { contractViolations } from '../../observe/violations.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'contract.status-documented',
  title: 'Every status answered is documented for its operation',
  asserts: 'Contract only: every status the service answered is documented for its operation.',
  clauses: [],
  decisions: ['ND-ERRORS', 'ND-CREATE-RESPONSE'],
  profiles: ['contract', 'mock'],
  phase: 'passive',
  async run(ctx) {
    const found = contractViolations(ctx, 'status');
    if (found.length > 0) {
      fail({ clause: 'ND-ERRORS', message: `${found.length} answers have a status the contract does not document: ${found[0]!.message}`, expected: 'documented statuses only', received: found.slice(0, 5).map((v) => v.message).join('; '), fix: 'Answer only documented statuses, or document the new one in openapi/.', exchanges: found.slice(0, 3).map((v) => v.exchange) });
    }
  },
});
