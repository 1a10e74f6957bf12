// The one serializer of the public records: GET responses, 202 bodies and webhook
// payloads all come from here, so a webhook's data.object equals the GET response
// (WH-PAYLOAD-SHAPE).
import type { components } from '../../../generated/openapi.ts';
import { CAPTIONS_FILE_NAME, FILE_NAME } from './files.ts';
import type { AvatarInput, Job, VideoInput } from './model.ts';

export type AvatarResource = components['schemas']['Avatar'];
export type AvatarVideoResource = components['schemas']['AvatarVideo'];

declare const encodes: unique symbol;
/** A record's JSON text, typed by the record it encodes, so a route still sends what the contract says. */
export type JsonText<T> = string & { readonly [encodes]?: T };
export const jsonText = <T>(record: T): JsonText<T> => JSON.stringify(record) as JsonText<T>;

/** A time as the API writes it: ISO 8601 in UTC, to the millisecond. */
export const iso = (ms: number) => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

export function fileUrl(publicBaseUrl: string, job: Job, name: string = FILE_NAME[job.kind]): string {
  return `${publicBaseUrl}/files/${job.id}/${name}`;
}

/** The members both records share: the request's webhook, the cost, the failure and the times. */
function jobFields(job: Job) {
  return {
    webhook_url: job.webhookUrl,
    credits: job.credits,
    error: job.status === 'failed' ? job.error : null,
    created_at: iso(job.createdAt),
    updated_at: iso(job.updatedAt),
    completed_at: isoOrNull(job.completedAt),
  };
}

export function toAvatarResource(job: Job, publicBaseUrl: string): AvatarResource {
  const input = job.input as AvatarInput;
  const inputs: Partial<AvatarResource> = {};
  if (input.type === 'prompt') inputs.prompt = input.prompt!;
  if (input.type === 'photo') inputs.file = input.file!;
  if (input.type === 'props') {
    inputs.ethnicity = input.ethnicity as AvatarResource['ethnicity'];
    inputs.sex = input.sex as AvatarResource['sex'];
    inputs.age = input.age!;
  }
  return {
    id: job.id,
    object: 'avatar',
    type: input.type,
    name: input.name,
    ...inputs,
    status: job.status,
    preview_image_url: job.status === 'ready' ? fileUrl(publicBaseUrl, job) : null,
    ...jobFields(job),
  };
}

export function toAvatarVideoResource(job: Job, publicBaseUrl: string): AvatarVideoResource {
  const input = job.input as VideoInput;
  const ready = job.status === 'ready';
  return {
    id: job.id,
    object: 'avatar_video',
    avatar_id: input.avatar_id,
    script: input.script,
    aspect_ratio: input.aspect_ratio,
    status: job.status,
    video_url: ready ? fileUrl(publicBaseUrl, job) : null,
    duration_seconds: ready ? (job.result?.duration_seconds ?? null) : null,
    captions_url: ready ? fileUrl(publicBaseUrl, job, CAPTIONS_FILE_NAME) : null,
    ...jobFields(job),
  };
}

export function toResource(job: Job, publicBaseUrl: string): AvatarResource | AvatarVideoResource {
  return job.kind === 'avatar' ? toAvatarResource(job, publicBaseUrl) : toAvatarVideoResource(job, publicBaseUrl);
}
