// The service's logger, as the assembly makes it: whatever a line holds, a key or a
// signing secret a client sent never reaches the output, whether a redacted path names
// it or not.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { redactSecretShapes } from '../../contract/secrets.ts';
import { createLogger } from '../src/logger.ts';

const KEY = 'sk_live_22_YG-Pnof8b15H5bnxX7YyO6R7hjPP3';
const SECRET = 'whsec_aCwsFU2VXibt/0J5ufMfOFCMRx+obFBG==';

describe('createLogger', () => {
  it('redacts secrets by path and, with the scrub the assembly gives it, wherever else a line holds one', () => {
    let written = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        written += String(chunk);
        done();
      },
    });
    const log = createLogger('info', redactSecretShapes, sink);

    log.info({ authorization: `Bearer ${KEY}` }, 'by path');
    log.error({ err: new Error(`Unexpected token in JSON at position 9: {"key":"${KEY}"}`) }, 'a parse failure quoting a body');
    log.warn({ url: `/v1/avatars?secret=${encodeURIComponent(SECRET)}` }, 'a query');

    const lines = written.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((l) => l.msg)).toEqual(['by path', 'a parse failure quoting a body', 'a query']);
    expect(written).not.toContain(KEY);
    expect(written).not.toContain(SECRET);
    expect(written).not.toContain(encodeURIComponent(SECRET));
    expect(lines[1].err.message).toContain('sk_live_…(redacted)');
  });
});
