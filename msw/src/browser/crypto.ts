// What the domain takes from node:crypto, for a page: SHA-256 and HMAC from @noble/hashes
// (synchronous, as the domain's callers are), random bytes from Web Crypto. The browser
// bundle of the package puts this module where node:crypto is imported; the server keeps
// Node's, so API keys are hashed the same way in both (SHA-256, never stored in clear).
import { Buffer } from './buffer.ts';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';

type Data = string | Uint8Array;
type Encoding = 'hex' | 'base64' | 'base64url' | undefined;

const bytesOf = (data: Data): Uint8Array => (typeof data === 'string' ? new TextEncoder().encode(data) : data);

function checkAlgorithm(algorithm: string): void {
  if (algorithm.toLowerCase() !== 'sha256') throw new Error(`the sandbox's crypto has sha256 only, not ${algorithm}`);
}

const encoded = (digest: Uint8Array, encoding: Encoding): Uint8Array | string => {
  const buffer = Buffer.from(digest);
  return encoding === undefined ? buffer : buffer.toString(encoding);
};

export function randomBytes(size: number): Uint8Array {
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(size)));
}

export function randomUUID(): string {
  return globalThis.crypto.randomUUID();
}

export function hash(algorithm: string, data: Data, encoding: Encoding = 'hex'): Uint8Array | string {
  checkAlgorithm(algorithm);
  return encoded(sha256(bytesOf(data)), encoding);
}

/** Node's createHash('sha256'): update, then digest once. */
export function createHash(algorithm: string) {
  checkAlgorithm(algorithm);
  const state = sha256.create();
  return {
    update(data: Data) {
      state.update(bytesOf(data));
      return this;
    },
    digest: (encoding?: Encoding) => encoded(state.digest(), encoding),
  };
}

/** Node's createHmac('sha256', key): what the webhook signature scheme in contract/ uses. */
export function createHmac(algorithm: string, key: Data) {
  checkAlgorithm(algorithm);
  const state = hmac.create(sha256, bytesOf(key));
  return {
    update(data: Data) {
      state.update(bytesOf(data));
      return this;
    },
    digest: (encoding?: Encoding) => encoded(state.digest(), encoding),
  };
}

export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) throw new RangeError('Input buffers must have the same byte length');
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

export default { randomBytes, randomUUID, hash, createHash, createHmac, timingSafeEqual };
