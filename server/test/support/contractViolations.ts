// Every response a server test receives is checked against the bundled contract by
// the conformance runner's own validator: the status is documented, the body matches
// its schema, required headers are there. One judge for the runner and the tests.
import { ContractValidator } from '../../../conformance/src/contract.ts';
import { loadBundle } from '../../../contract/schemas.ts';

const validator = ContractValidator.load();

/**
 * The members the contract declares for a problem. Its schema stays open, since new
 * members may appear within /v1 (ND-COMPAT), so the schema alone would let this server
 * send one it never declared; the tests hold it to the list.
 */
const PROBLEM_MEMBERS = new Set(Object.keys((loadBundle().components as any).schemas.Problem.properties));

export interface Observed {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

/** Problems with a response, as readable strings; empty when it conforms. */
export function contractViolations(r: Observed): string[] {
  const headers = Object.fromEntries([...r.headers].map(([k, v]) => [k.toLowerCase(), v]));
  const json = (headers['content-type'] ?? '').includes('json') && r.text ? r.body : undefined;
  const found = validator.validateResponse(r.method, r.path, r.status, headers, r.text, json).map((v) => `${r.method} ${r.path}: ${v.message}`);
  if ((headers['content-type'] ?? '').startsWith('application/problem+json') && json && typeof json === 'object') {
    for (const member of Object.keys(json)) if (!PROBLEM_MEMBERS.has(member)) found.push(`${r.method} ${r.path}: the problem member ${member} is not declared in the contract`);
  }
  return found;
}
