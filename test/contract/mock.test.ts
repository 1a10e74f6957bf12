// The Prism mock (scripts/mock.ts) is what client authors code against before the
// server exists, so it must answer as the contract says: the documented success and
// example per operation, named examples and error codes on request, bearer auth, and
// request validation. Every table here is read from generated/openapi.json.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort, startMock, type MockServer } from '../../scripts/mock.ts';
import {
  deref,
  examplePath,
  examplesOf,
  listOperations,
  loadDocument,
  onlyMediaType,
  successOf,
  type JsonObject,
  type OperationEntry,
} from './support/openapi.ts';

const KEY = 'Bearer sk_test_x';
const doc = loadDocument();
const operations = listOperations(doc);

interface Call {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}


// The documented request examples of an operation, or one "no body" row if it takes none.
function requestExamples(entry: OperationEntry): [string, unknown][] {
  if (entry.operation.requestBody === undefined) return [['no body', undefined]];
  return examplesOf(doc, onlyMediaType(doc, entry.operation.requestBody).mediaType);
}

// The named examples of a documented response, e.g. of the 402 of POST /v1/avatars.
function responseExamples(entry: OperationEntry, status: string): { type: string; examples: [string, unknown][] } {
  const { type, mediaType } = onlyMediaType(doc, entry.operation.responses?.[status]);
  return { type, examples: examplesOf(doc, mediaType) };
}

function find(method: string, path: string): OperationEntry {
  const entry = operations.find((o) => o.method === method && o.path === path);
  if (!entry) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
  return entry;
}

// One row per operation and documented request example: Prism must accept each one.
const successCases = operations.flatMap((entry) => {
  const { status, response } = successOf(doc, entry.operation);
  const { type, mediaType } = onlyMediaType(doc, response);
  const [firstName, firstValue] = examplesOf(doc, mediaType)[0] ?? [];
  return requestExamples(entry).map(([requestExample, body]) => ({
    name: `${entry.method.toUpperCase()} ${entry.path} (${requestExample})`,
    call: { method: entry.method, path: examplePath(doc, entry), body },
    status,
    type,
    exampleName: firstName,
    example: firstValue,
  }));
});

// One row per named example of each success response.
const namedExampleCases = operations.flatMap((entry) => {
  const { status, response } = successOf(doc, entry.operation);
  const [, body] = requestExamples(entry)[0] ?? [];
  return examplesOf(doc, onlyMediaType(doc, response).mediaType).map(([exampleName, example]) => ({
    name: `${entry.method.toUpperCase()} ${entry.path} example=${exampleName}`,
    call: { method: entry.method, path: examplePath(doc, entry), body, headers: { Prefer: `example=${exampleName}` } },
    status,
    example,
  }));
});

async function call(mock: MockServer, { method, path, headers = {}, body }: Call, auth: string | null = KEY) {
  const response = await fetch(`${mock.url}${path}`, {
    method: method.toUpperCase(),
    headers: {
      ...(auth ? { Authorization: auth } : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as unknown) : undefined };
}

// Prism reports what the request broke in an `sl-violations` header (JSON).
function violations(headers: Headers): { location: string[]; code: string | number; message: string }[] {
  return JSON.parse(headers.get('sl-violations') ?? '[]') as { location: string[]; code: string | number; message: string }[];
}

describe('Prism mock of generated/openapi.json', () => {
  let mock: MockServer;

  beforeAll(async () => {
    mock = await startMock({ port: await freePort() });
  });

  afterAll(async () => {
    await mock?.stop();
  });

  test('startMock refuses a port another program holds instead of talking to that program', async () => {
    const squatter = createServer().listen(0, '127.0.0.1');
    await new Promise((ready) => squatter.once('listening', ready));
    const { port } = squatter.address() as { port: number };

    try {
      await expect(startMock({ port })).rejects.toThrow(`the mock cannot listen on 127.0.0.1:${port}: EADDRINUSE`);
    } finally {
      squatter.close();
    }
  });

  test('the tables cover every operation of the document', () => {
    expect(operations.length).toBeGreaterThan(0);
    expect(new Set(successCases.map((c) => c.call.method + c.call.path)).size).toBe(operations.length);
  });

  test.each(successCases)('$name answers its success status with the first documented example', async (row) => {
    const response = await call(mock, row.call);

    expect(response.status).toBe(row.status);
    expect(response.headers.get('content-type')).toBe(row.type);
    expect(response.body, `example "${row.exampleName}"`).toEqual(row.example);
  });

  test.each(namedExampleCases)('$name: Prefer selects that example', async (row) => {
    const response = await call(mock, row.call);

    expect(response.status).toBe(row.status);
    expect(response.body).toEqual(row.example);
  });

  test('GET /v1/avatars/{id} with Prefer: example=failed returns a failed avatar', async () => {
    const entry = find('get', '/v1/avatars/{id}');

    const response = await call(mock, { method: 'get', path: examplePath(doc, entry), headers: { Prefer: 'example=failed' } });

    expect(response.status).toBe(200);
    expect((response.body as JsonObject).status).toBe('failed');
    expect((response.body as JsonObject).error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  });

  test('POST /v1/avatars with Prefer: code=402 returns the insufficient_credits problem', async () => {
    const entry = find('post', '/v1/avatars');
    const [, body] = requestExamples(entry)[0] ?? [];
    const { type, examples } = responseExamples(entry, '402');

    const response = await call(mock, { method: 'post', path: entry.path, body, headers: { Prefer: 'code=402' } });

    expect(response.status).toBe(402);
    expect(response.headers.get('content-type')).toBe(type);
    expect(response.body).toEqual(examples[0]?.[1]);
    expect((response.body as JsonObject).code).toBe('insufficient_credits');
  });

  test.each(operations)('$method $path without Authorization is refused with 401', async (entry) => {
    const [, body] = requestExamples(entry)[0] ?? [];
    const unauthorized = responseExamples(entry, '401');

    const response = await call(mock, { method: entry.method, path: examplePath(doc, entry), body }, null);

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    expect(response.body).toEqual(unauthorized.examples[0]?.[1]);
  });

  // Prism answers an invalid body with the operation's 422 when it documents one (it
  // falls back to 400 only when there is no 422), with the 422's example as the body and
  // the actual rule broken in the sl-violations header.
  const invalidBodies = [
    {
      name: 'a props avatar aged 19',
      path: '/v1/avatars',
      body: { type: 'props', name: 'Fitness coach', ethnicity: 'Hispanic', sex: 'male', age: 19 },
      violation: { location: ['request', 'body', 'age'], code: 'minimum' },
    },
    {
      name: 'an avatar without a name',
      path: '/v1/avatars',
      body: { type: 'prompt', prompt: 'A woman in her late twenties filming a selfie video.' },
      violation: { location: ['request', 'body'], code: 'required', message: expect.stringContaining("'name'") },
    },
    {
      name: 'an avatar whose name holds U+0000, which the text rule refuses',
      path: '/v1/avatars',
      body: { type: 'prompt', name: 'Ana\u0000', prompt: 'A woman in her late twenties filming a selfie video.' },
      violation: { location: ['request', 'body', 'name'], code: 'pattern' },
    },
    {
      name: 'a video with a misspelt member',
      path: '/v1/avatar-videos',
      body: { avatar_id: 'av_3k9x2m7q4w8e1r5t6y0u2i4o', scirpt: 'Hi there!' },
      violation: { location: ['request', 'body'], code: 'additionalProperties' },
    },
  ];

  test.each(invalidBodies)('refuses $name with 422 validation_failed', async ({ path, body, violation }) => {
    const entry = find('post', path);
    const documented = responseExamples(entry, '422');

    const response = await call(mock, { method: 'post', path, body });

    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toBe(documented.type);
    expect(response.body).toEqual(documented.examples[0]?.[1]);
    expect(violations(response.headers)).toContainEqual(expect.objectContaining(violation));
  });
});

describe('unknown query parameters on the mock, as on the server', () => {
  let mock: MockServer;

  beforeAll(async () => {
    mock = await startMock({ port: 0 });
  });

  afterAll(async () => {
    await mock?.stop();
  });

  // Every operation, sent its first request example with one parameter it does not take.
  const cases = operations.map((entry) => ({ name: `${entry.method.toUpperCase()} ${entry.path}`, entry, body: requestExamples(entry)[0]?.[1] }));

  test.each(cases)('$name with a parameter it does not take answers its documented 422, naming the parameter', async ({ entry, body }) => {
    const documented = responseExamples(entry, '422');
    const unknownParameter = documented.examples.find(([name]) => name === 'unknown_parameter')?.[1];

    const response = await call(mock, { method: entry.method, path: `${examplePath(doc, entry)}?zzz=1`, body });

    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toBe(documented.type);
    expect(unknownParameter).toBeDefined();
    expect(response.body).toEqual(unknownParameter);
    expect(violations(response.headers)).toContainEqual(expect.objectContaining({ location: ['request', 'query', 'zzz'] }));
  });

  test('GET /v1/avatars with a misspelt limit is refused, and with the parameters it takes is answered', async () => {
    const misspelt = await call(mock, { method: 'get', path: '/v1/avatars?limt=5&status=ready' });
    const spelt = await call(mock, { method: 'get', path: '/v1/avatars?limit=5&status=ready' });

    expect(misspelt.status).toBe(422);
    expect(violations(misspelt.headers).map((v) => v.location)).toEqual([['request', 'query', 'limt']]);
    expect(spelt.status).toBe(200);
  });

  test('a request without a key is refused with 401 first, as the server does', async () => {
    const response = await call(mock, { method: 'get', path: '/v1/me?zzz=1' }, null);

    expect(response.status).toBe(401);
  });
});

describe('the npm run mock command', () => {
  const MOCK = new URL('../../scripts/mock.ts', import.meta.url).pathname;

  const READY = /Mock API on http:\/\/\S+ \(a Prism mock of .*\n/;

  /** Runs `node scripts/mock.ts <args>` until it says it is ready, then stops it; or until it ends. */
  function runMock(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const env = { ...process.env };
    delete env.PORT;
    const child = spawn(process.execPath, [MOCK, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (READY.test(stdout)) child.kill('SIGTERM');
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    return new Promise((done) => child.once('close', (code) => done({ code, stdout, stderr })));
  }

  test('listens on the port given with --port, and names that one URL: never the port Prism itself listens on behind it', async () => {
    const port = await freePort();

    const run = await runMock(['--port', String(port)]);

    expect(run.stdout).toContain(`Mock API on http://127.0.0.1:${port} (a Prism mock of generated/openapi.json): use this URL as the base URL\n`);
    const urls = new Set([...`${run.stdout}${run.stderr}`.matchAll(/https?:\/\/(?:127\.0\.0\.1|localhost):\d+/g)].map(([url]) => url));
    expect([...urls]).toEqual([`http://127.0.0.1:${port}`]);
  });

  test('refuses an argument it does not know with one line and the usage, exit 2, instead of ignoring it', async () => {
    const run = await runMock(['--prot', '4030']);

    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`mock: Unknown option '--prot'; usage: npm run mock [-- --port N] [--host H]   (or PORT=N, HOST=H; default 127.0.0.1:4010)\n`);
    expect(run.stdout).toBe('');
  });
});
