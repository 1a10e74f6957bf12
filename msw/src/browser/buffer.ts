// Node's Buffer, as much of it as the code the page runs uses (the domain's list cursors
// and API keys in base64url, the signature scheme's UTF-8): a Uint8Array that encodes and
// decodes utf8, hex, base64 and base64url. The buffer package's Buffer knows no base64url.
type Encoding = 'utf8' | 'utf-8' | 'hex' | 'base64' | 'base64url';

function fromBase64(text: string, url: boolean): Uint8Array {
  let b64 = url ? text.replace(/-/g, '+').replace(/_/g, '/') : text;
  b64 += '='.repeat((4 - (b64.length % 4)) % 4);
  const binary = atob(b64);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function toBase64(bytes: Uint8Array, url: boolean): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  const b64 = btoa(binary);
  return url ? b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '') : b64;
}

/** The bytes a `Buffer.from` makes: a Uint8Array whose toString takes an encoding. */
class Bytes extends Uint8Array {
  override toString(encoding: Encoding = 'utf8'): string {
    switch (encoding) {
      case 'hex':
        return [...this].map((b) => b.toString(16).padStart(2, '0')).join('');
      case 'base64':
      case 'base64url':
        return toBase64(this, encoding === 'base64url');
      default:
        return new TextDecoder().decode(this);
    }
  }
}

function wrap(bytes: Uint8Array): Bytes {
  const out = new Bytes(bytes.length);
  out.set(bytes);
  return out;
}

export const Buffer = {
  from(value: string | ArrayLike<number> | ArrayBuffer, encoding: Encoding = 'utf8'): Bytes {
    if (typeof value !== 'string') return wrap(value instanceof ArrayBuffer ? new Uint8Array(value) : Uint8Array.from(value));
    switch (encoding) {
      case 'hex':
        return wrap(Uint8Array.from(value.match(/../g) ?? [], (pair) => parseInt(pair, 16)));
      case 'base64':
      case 'base64url':
        return wrap(fromBase64(value, encoding === 'base64url'));
      default:
        return wrap(new TextEncoder().encode(value));
    }
  },
  concat(list: readonly Uint8Array[]): Bytes {
    const out = new Bytes(list.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of list) {
      out.set(b, at);
      at += b.length;
    }
    return out;
  },
  isBuffer: (value: unknown): value is Bytes => value instanceof Bytes,
  byteLength: (value: string): number => new TextEncoder().encode(value).length,
};
