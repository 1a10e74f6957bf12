// File links that expire (ND-FILE-LINKS), as presigned storage URLs do: a link needs no
// key, and carries `expires` (Unix seconds of the account's time) and `signature`, the
// base64url HMAC-SHA256 under the service's link key of the link's path, a newline and
// `expires`. The key is the service's, the same in every process (FILE_LINK_KEY, or the one
// the store keeps), so any API process verifies what another signed. Links are signed as
// a record leaves the service (a read, a list, each attempt of a webhook, a read of the
// delivery log), never stored signed, so a kept answer of a finished record
// (finishedRecords.ts) is signed afresh on each read and a stored event on each send.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { FILE_LINKS } from '../../../contract/numbers.ts';
import type { DomainDeps } from './deps.ts';
import { DomainError } from './errors.ts';
import type { Account } from './model.ts';

/** How long a link given now stays valid, on the account's time (the contract's x-file-links). */
export const FILE_LINK_LIFETIME_MS = FILE_LINKS.lifetimeSeconds * 1000;
/** Until when (the service's time) a link without `expires` and `signature`, made before links were signed, is served. */
export const UNSIGNED_LINKS_UNTIL_MS = FILE_LINKS.unsignedUntilMs;

/** The members of a record that hold file links. */
const LINK_MEMBERS = ['preview_image_url', 'video_url', 'captions_url'] as const;

/** A link member and its value in a record's JSON text: the member's name anchors it, so no other string (a script, a webhook_url) is touched. */
const LINK_IN_JSON = new RegExp(`"(${LINK_MEMBERS.join('|')})":"([^"\\\\]*)"`, 'gu');

/** The part of a link that is signed: `/files/<id>/<name>`, whatever base it is served under. */
const FILE_PATH = /\/files\/[^/?#]+\/[^/?#]+$/u;

function signatureOf(key: string, path: string, expires: number): string {
  return createHmac('sha256', key).update(`${path}\n${expires}`).digest('base64url');
}

/** Signs records' file links as they leave the service, valid for the lifetime from `accountNowMs`. */
export interface FileLinkSigner {
  /** A link with `expires` and `signature` added (one already signed is signed again). */
  url(url: string): string;
  /** The record with each file link signed (a copy; the record is left as it was). */
  record<T extends object>(record: T): T;
  /** A record's JSON text (or a list's, or an event's) with each file link signed. */
  json<T extends string>(text: T): T;
}

export function fileLinkSigner(key: string, accountNowMs: number): FileLinkSigner {
  const expires = Math.floor((accountNowMs + FILE_LINK_LIFETIME_MS) / 1000);
  const url = (link: string): string => {
    const bare = link.split('?', 1)[0]!;
    const path = FILE_PATH.exec(bare)?.[0];
    if (!path) return link; // not one of this service's file links: left as it is
    return `${bare}?expires=${expires}&signature=${signatureOf(key, path, expires)}`;
  };
  return {
    url,
    record<T extends object>(record: T): T {
      const signed = { ...record } as Record<string, unknown>;
      for (const member of LINK_MEMBERS) {
        const value = signed[member];
        if (typeof value === 'string') signed[member] = url(value);
      }
      return signed as T;
    },
    json: <T extends string>(text: T) => text.replace(LINK_IN_JSON, (_, member: string, link: string) => `"${member}":"${url(link)}"`) as T,
  };
}

/** The signer of the links an account is given now: valid for the lifetime from the account's time. */
export function accountLinks(deps: Pick<DomainDeps, 'clock' | 'fileLinkKey'>, account: Pick<Account, 'clockOffsetMs'>): FileLinkSigner {
  return fileLinkSigner(deps.fileLinkKey, deps.clock.now() + account.clockOffsetMs);
}

/** A list of records with each record's file links signed. */
export function signedList<T extends { data: readonly object[] }>(links: FileLinkSigner, list: T): T {
  return { ...list, data: list.data.map((record) => links.record(record)) };
}

/** What a link's query says: signed (its expiry, ms of the account's time), or made before links were signed. */
export type LinkClaim = { signed: true; expiresAtMs: number } | { signed: false };

const linkInvalid = () =>
  new DomainError('file_link_invalid', 'This file link was altered, or is not one the service made: read the record again for a fresh link.');

/** The last value of a query parameter, as the URL standard reads the query. */
function param(query: URLSearchParams, name: string): string | undefined {
  const all = query.getAll(name);
  return all.length === 0 ? undefined : all[all.length - 1];
}

/**
 * Checks a file link's signature over its `path` and `query` (before any lookup: a
 * forged link learns nothing of which files exist). Throws `file_link_invalid` for a
 * link whose path, `expires` or `signature` was altered, or that has one of the two
 * without the other; a link with neither is one made before links were signed.
 */
export function verifyFileLink(key: string, path: string, query: URLSearchParams): LinkClaim {
  // What was signed is the link's /files/<id>/<name>, whatever base the link is served under.
  const signedPath = FILE_PATH.exec(path)?.[0] ?? path;
  const expires = param(query, 'expires');
  const signature = param(query, 'signature');
  if (expires === undefined && signature === undefined) return { signed: false };
  if (expires === undefined || signature === undefined || !/^\d{1,12}$/u.test(expires)) throw linkInvalid();
  // Bytes, not a Buffer: the MSW page bundle has node:crypto's stand-in but no node:buffer.
  const expected = new TextEncoder().encode(signatureOf(key, signedPath, Number(expires)));
  const given = new TextEncoder().encode(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw linkInvalid();
  return { signed: true, expiresAtMs: Number(expires) * 1000 };
}

/**
 * Throws `file_link_expired` when the link's time has passed: a signed link's expiry on
 * the account's time (`accountNowMs`, which the sandbox clock moves), an unsigned one's
 * grace on the service's (`serviceNowMs`).
 */
export function refuseExpired(claim: LinkClaim, accountNowMs: number, serviceNowMs: number): void {
  if (claim.signed && accountNowMs >= claim.expiresAtMs) {
    throw new DomainError(
      'file_link_expired',
      `This file link expired at ${new Date(claim.expiresAtMs).toISOString()} (the account's time is ${new Date(accountNowMs).toISOString()}): read the record again for a fresh link.`,
    );
  }
  if (!claim.signed && serviceNowMs >= UNSIGNED_LINKS_UNTIL_MS) {
    throw new DomainError(
      'file_link_expired',
      `Links without expires and signature were served until ${new Date(UNSIGNED_LINKS_UNTIL_MS).toISOString()}: read the record again for a fresh link.`,
    );
  }
}
