// Every response a server test receives is checked against the bundled contract:
// the status is documented, the body matches its schema, required headers are there.
import { readFileSync } from 'node:fs';
import { createContractAjv } from '../../../contract/schemas.ts';

type Json = Record<string, any>;

const bundle = JSON.parse(readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8')) as Json;
const ajv = createContractAjv(bundle);

const deref = (node: Json): Json => {
  if (!node?.$ref) return node;
  const parts = String(node.$ref).replace(/^#\//, '').split('/');
  return deref(parts.reduce((n: Json, p) => n[p], bundle));
};

const templates = Object.keys(bundle.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

export interface Observed {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  body: unknown;
}

/** Problems with a response, as readable strings; empty when it conforms. */
export function contractViolations(r: Observed): string[] {
  const found = templates.find((t) => t.pattern.test(r.path.split('?')[0]!));
  if (!found) return [];
  const operation = bundle.paths[found.template][r.method.toLowerCase()] as Json | undefined;
  if (!operation) return r.status === 405 ? [] : [`${r.method} ${found.template} is not in the contract`];
  const responses = operation.responses as Json;
  const documented = responses[String(r.status)] ?? responses[`${String(r.status)[0]}XX`] ?? responses.default;
  const where = `${r.method} ${found.template} -> ${r.status}`;
  if (!documented) return [`${where}: status not documented (documented: ${Object.keys(responses).join(', ')})`];
  const response = deref(documented);
  const problems: string[] = [];
  for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
    const h = deref(header);
    const value = r.headers.get(name);
    if (value === null) {
      if (h.required) problems.push(`${where}: required header ${name} missing`);
      continue;
    }
    if (h.schema?.type === 'integer' && !/^\d+$/.test(value)) problems.push(`${where}: header ${name}=${value} is not an integer`);
  }
  const contentType = (r.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const media = response.content?.[contentType];
  if (!response.content) return problems;
  if (!media) return [...problems, `${where}: content type ${contentType} not documented (${Object.keys(response.content).join(', ')})`];
  const validate = ajv.compile(media.schema);
  if (!validate(r.body)) problems.push(`${where}: body breaks the schema: ${ajv.errorsText(validate.errors)}`);
  return problems;
}
