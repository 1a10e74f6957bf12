// Every recorded answer checked against the contract once, shared by the contract checks.
import type { ContractViolation } from '../contract.ts';
import type { CheckContext } from '../context.ts';
import type { Exchange } from '../http.ts';

export interface Found extends ContractViolation {
  exchange: Exchange;
}

export function contractViolations(ctx: CheckContext, kind: ContractViolation['kind'] | ContractViolation['kind'][]): Found[] {
  const kinds = Array.isArray(kind) ? kind : [kind];
  const found: Found[] = [];
  for (const exchange of ctx.http.log) {
    for (const violation of ctx.validator.validateResponse(exchange.method, exchange.path, exchange.status, exchange.responseHeaders, exchange.bodyText, exchange.json)) {
      if (kinds.includes(violation.kind)) found.push({ ...violation, message: `${exchange.method} ${exchange.path}: ${violation.message}`, exchange });
    }
  }
  return found;
}
