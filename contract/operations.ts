// What the contract says of each operation beyond its schemas, read from the bundle so
// that the server never writes it again by hand.
import { loadBundle, type JsonObject } from './schemas.ts';

/** Each operation's rate-limit bucket (`x-rate-limit-bucket`), by operationId. */
export function rateLimitBuckets(bundle: JsonObject = loadBundle()): ReadonlyMap<string, string> {
  const buckets = new Map<string, string>();
  for (const item of Object.values((bundle.paths ?? {}) as Record<string, Record<string, JsonObject>>)) {
    for (const operation of Object.values(item)) {
      if (typeof operation?.operationId === 'string' && typeof operation['x-rate-limit-bucket'] === 'string') {
        buckets.set(operation.operationId, operation['x-rate-limit-bucket']);
      }
    }
  }
  return buckets;
}

/** A parameter of the contract's shared components (`components.parameters`), found by where it goes and its name. */
export function sharedParameter(place: 'header' | 'query' | 'path', name: string, bundle: JsonObject = loadBundle()): JsonObject {
  const shared = ((bundle.components as JsonObject | undefined)?.parameters ?? {}) as Record<string, JsonObject>;
  const found = Object.values(shared).find((p) => p.in === place && typeof p.name === 'string' && p.name.toLowerCase() === name.toLowerCase());
  if (!found) throw new Error(`the contract shares no ${place} parameter ${name}`);
  return found;
}

/**
 * The query parameters each operation takes, by operationId, in the order the contract
 * lists them (the path item's, then the operation's). Any other is refused (ND-QUERY).
 */
export function queryParameters(bundle: JsonObject = loadBundle()): ReadonlyMap<string, readonly string[]> {
  const components = ((bundle.components as JsonObject | undefined)?.parameters ?? {}) as Record<string, JsonObject>;
  const resolve = (p: JsonObject): JsonObject => (typeof p.$ref === 'string' ? (components[p.$ref.replace('#/components/parameters/', '')] ?? {}) : p);
  const names = (list: unknown) => ((list ?? []) as JsonObject[]).map(resolve).filter((p) => p.in === 'query').map((p) => String(p.name));
  const taken = new Map<string, string[]>();
  for (const item of Object.values((bundle.paths ?? {}) as Record<string, Record<string, JsonObject>>)) {
    for (const [key, operation] of Object.entries(item)) {
      if (key === 'parameters' || typeof operation?.operationId !== 'string') continue;
      taken.set(operation.operationId, [...new Set([...names(item.parameters), ...names(operation.parameters)])]);
    }
  }
  return taken;
}
