// The browser bundle's stand-ins for node:crypto and Buffer give what Node's give, so a
// key hashed in the page is the key hashed by the server (SHA-256, never kept in clear),
// a signature is the same signature, and a list cursor reads back in either.
import * as node from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Buffer as PageBuffer } from '../src/browser/buffer.ts';
import * as page from '../src/browser/crypto.ts';

const KEY = 'sk_test_4fJ0p-Wb_QeXk2uYt8Hn9LzA1cVdRs3M';

describe("the page's node:crypto", () => {
  it('hashes an API key as the server does', () => {
    expect(page.hash('sha256', KEY, 'hex')).toBe(node.hash('sha256', KEY, 'hex'));
    expect(page.createHash('sha256').update('createAvatar\n').update('{"a":1}').digest('hex')).toBe(node.createHash('sha256').update('createAvatar\n').update('{"a":1}').digest('hex'));
  });

  it('signs as the server does (HMAC-SHA256, hex and base64)', () => {
    for (const encoding of ['hex', 'base64'] as const) {
      expect(page.createHmac('sha256', 'whsec_x').update('1700000000.{"id":"evt_1"}').digest(encoding)).toBe(node.createHmac('sha256', 'whsec_x').update('1700000000.{"id":"evt_1"}').digest(encoding));
    }
  });

  it('draws random bytes of the length asked, which differ between draws', () => {
    const [a, b] = [page.randomBytes(24), page.randomBytes(24)];
    expect(a).toHaveLength(24);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
  });

  it('refuses an algorithm it does not have rather than hashing with another', () => {
    expect(() => page.createHash('md5')).toThrow(/sha256 only/);
  });
});

describe("the page's Buffer", () => {
  it('encodes and decodes base64url, base64, hex and UTF-8 as Node does', () => {
    const text = JSON.stringify({ t: 1764158400000, i: 'av_ü✓' });
    for (const encoding of ['base64url', 'base64', 'hex'] as const) {
      const encoded = PageBuffer.from(text).toString(encoding);
      expect(encoded).toBe(Buffer.from(text).toString(encoding));
      expect(PageBuffer.from(encoded, encoding).toString('utf8')).toBe(text);
    }
  });
});
