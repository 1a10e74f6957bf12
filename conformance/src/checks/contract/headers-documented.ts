import { defineCheck } from '../../check.ts';
import { contractViolations } from '../../observe/violations.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'contract.headers-documented',
  title: 'Documented response headers are present and valid',
  asserts: 'Contract only: the headers the contract documents for an answer are present with valid values.',
  clauses: [],
  decisions: ['ND-CREATE-RESPONSE', 'ND-AUTH-PRESENTATION'],
  profiles: ['contract', 'mock'],
  phase: 'passive',
  async run(ctx) {
    const found = contractViolations(ctx, 'header');
    if (found.length > 0) {
      fail({ clause: 'ND-CREATE-RESPONSE', message: `${found.length} header problems: ${found[0]!.message}`, expected: 'every required documented header, valid', received: found.slice(0, 5).map((v) => v.message).join('; '), fix: 'Send the headers the contract documents for each status.', exchanges: found.slice(0, 3).map((v) => v.exchange) });
    }
  },
});
