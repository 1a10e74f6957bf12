import { at, usesPlaceholder } from '../../implementation/profile.ts';
import { fail, notApplicable } from '../../outcome.ts';
import { defineProxyCheck, describe, eventObject } from '../check.ts';
import type { ProxyContext } from '../check.ts';

export default defineProxyCheck({
  id: 'client.video-after-ready',
  title: 'The client asks for a video only with an avatar it has seen ready',
  asserts:
    'Every video request names an avatar (made through the proxy) that the same key had already seen ready: a GET answered before the request showing it ready, or an avatar.ready webhook of its own passed to its receiver before the request.',
  party: 'client',
  clauses: ['AV-READY-BEFORE-VIDEO'],
  run(ctx) {
    const { traffic } = ctx;
    const avatars = new Set(traffic.created.filter((job) => job.kind === 'avatar').map((job) => job.id));
    const requests = traffic.exchanges.filter((seen) => seen.operationId === 'createAvatarVideo' && seen.method === 'POST' && seen.key !== undefined);
    const judged = requests.flatMap((seen) => {
      const avatarId = avatarIdOf(ctx, seen.requestJson);
      return avatarId !== undefined && avatars.has(avatarId) ? [{ seen, avatarId }] : [];
    });
    if (judged.length === 0) {
      notApplicable(
        requests.length === 0
          ? 'no video was requested'
          : `none of the ${requests.length} video requests named an avatar made through the proxy, whose readiness the proxy could have seen`,
      );
    }
    for (const { seen, avatarId } of judged) {
      const readyAt = seenReady(ctx, seen.key!, avatarId);
      if (readyAt !== undefined && readyAt <= seen.arrivedAt) continue;
      fail({
        clause: 'AV-READY-BEFORE-VIDEO',
        message: `${seen.key} asked for a video of avatar ${avatarId} before it had seen the avatar ready${readyAt === undefined ? ' (it never did)' : ''}`,
        expected: 'a GET of the avatar showing it ready, or its avatar.ready webhook, before the video request',
        received: `POST ${seen.path} with avatar ${avatarId}`,
        fix: 'Poll GET /v1/avatars/{id} (with backoff) until it is ready, or wait for the avatar.ready webhook, before asking for a video of it.',
        evidence: [describe(seen)],
      });
    }
  },
});

/** The avatar a video request names, where the implementation's video request template puts it. */
function avatarIdOf({ shape }: ProxyContext, json: unknown): string | undefined {
  const pointer = pointerOf(shape.profile.create.video.body, '');
  const value = pointer === undefined ? undefined : at(json, pointer);
  return typeof value === 'string' ? value : undefined;
}

function pointerOf(template: unknown, path: string): string | undefined {
  if (typeof template === 'string') return template === '{{avatar_id}}' ? path : undefined;
  if (typeof template !== 'object' || template === null || !usesPlaceholder(template, 'avatar_id')) return undefined;
  for (const [name, value] of Object.entries(template)) {
    const found = pointerOf(value, `${path}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** When the key first saw the avatar ready: a read answered showing it so, or its webhook passed to the key's receiver. */
function seenReady({ traffic, shape }: ProxyContext, key: string, avatarId: string): number | undefined {
  const isReady = (record: unknown) => shape.recordId(record) === avatarId && shape.terminal(shape.state(record)) === 'ready';
  const times: number[] = [];
  for (const seen of traffic.exchanges) {
    if (seen.key !== key || seen.method !== 'GET' || seen.status < 200 || seen.status >= 300) continue;
    const json = seen.responseJson as { data?: unknown } | undefined;
    const listed = Array.isArray(json?.data) ? json.data : [];
    if (isReady(json) || listed.some(isReady)) times.push(seen.answeredAt);
  }
  for (const delivery of traffic.deliveries) {
    if (delivery.key === key && delivery.receiverStatus !== undefined && isReady(eventObject(delivery))) times.push(delivery.arrivedAt);
  }
  return times.length === 0 ? undefined : Math.min(...times);
}
