// What the proxy saw: every exchange between a client and the service, and every
// webhook delivery it passed from the service to a client's receiver, timed on the
// proxy's clock. The checks judge both parties from this record alone. Keys are kept
// here only as labels ("key 1 (sk_test_…)"): the tokens themselves never leave the
// forwarding code, so no report can show one.
import type { Bucket } from '../pacer.ts';

export interface Seen {
  seq: number;
  /** The key's label, or undefined for a request without a credential. */
  key: string | undefined;
  method: string;
  /** Path and query, as the client sent them. */
  path: string;
  /** The contract's operation, when the path is one of the API's. */
  operationId: string | undefined;
  bucket: Bucket | undefined;
  /** The request body as the client sent it (before any webhook_url was rewritten), when the proxy kept it. */
  requestJson: unknown;
  /** How many bytes of body the client sent, counted as they passed, when the proxy read them (a create's). */
  requestBytes?: number;
  /** When the request's head reached the proxy. */
  arrivedAt: number;
  /** When the answer's head went back to the client. */
  answeredAt: number;
  status: number;
  /** Lower-case names. */
  responseHeaders: Record<string, string>;
  /** The answer's body, when it was JSON and small enough to keep. */
  responseJson: unknown;
  responseText: string;
  /** How many bytes of body the answer had, kept or not. */
  responseBytes?: number;
  /** The proxy answered a 429 itself (--inject-429); the service never saw the request. */
  injected: boolean;
  /** The service could not be reached: the proxy answered 502, which says nothing of the service's rules. */
  proxyError?: string;
  /**
   * The proxy refused the request itself with this problem code, as the service refuses
   * it before any route is known (two Host headers): the service never saw it.
   */
  refusedByProxy?: string;
}

export interface SeenDelivery {
  seq: number;
  /** The label of the key whose create request named this webhook. */
  key: string | undefined;
  /** The client's receiver, as its create request named it. */
  receiver: string;
  /** The create exchange whose webhook_url the service was told to call: what its answer said of the job. */
  createSeq: number;
  /** When the service's delivery reached the proxy (and was passed on at once). */
  arrivedAt: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  rawBody: Buffer;
  json: unknown;
  /** The receiver's status, passed back to the service; undefined when it could not be reached. */
  receiverStatus: number | undefined;
}

/** A job the client created through the proxy: its ID from the create answer. */
export interface CreatedJob {
  kind: 'avatar' | 'avatar_video';
  id: string;
  key: string | undefined;
  at: number;
}

export class Traffic {
  readonly exchanges: Seen[] = [];
  readonly deliveries: SeenDelivery[] = [];
  readonly created: CreatedJob[] = [];
  readonly #labels = new Map<string, string>();

  /** A stable label per key, in the order keys were first seen; the mode prefix says which kind of key without giving it away. */
  label(token: string): string {
    let label = this.#labels.get(token);
    if (!label) {
      const prefix = /^(sk_(?:test|live)_)/.exec(token)?.[1];
      label = `key ${this.#labels.size + 1}${prefix ? ` (${prefix}…)` : ''}`;
      this.#labels.set(token, label);
    }
    return label;
  }

  /** Every token seen, for redacting anything that echoes one. */
  get tokens(): string[] {
    return [...this.#labels.keys()];
  }

  get keys(): string[] {
    return [...this.#labels.values()];
  }
}
