// Every response a server test receives is checked against the bundled contract by
// the conformance runner's own validator: the status is documented, the body matches
// its schema, required headers are there. One judge for the runner and the tests.
import { ContractValidator } from '../../../conformance/src/contract.ts';

const validator = ContractValidator.load();

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
  return validator.validateResponse(r.method, r.path, r.status, headers, r.text, json).map((v) => `${r.method} ${r.path}: ${v.message}`);
}
