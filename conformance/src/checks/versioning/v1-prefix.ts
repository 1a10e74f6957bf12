import { ALL, defineCheck } from '../../check.ts';
import { describe, isSuccess } from '../../expect.ts';
import { fail } from '../../outcome.ts';

export default defineCheck({
  id: 'versioning.v1-prefix',
  title: 'Every endpoint lives under /v1, and nothing answers without it',
  asserts: 'Nothing answers outside /v1 (/me, /avatars/{id}, /v2/me are not served) and every Location the service hands out points under /v1/.',
  clauses: ['VER-PREFIX'],
  profiles: ALL,
  // Last, so that every Location header the run was given is looked at.
  phase: 'passive',
  async run(ctx) {
    const id = ctx.profile === 'mock' ? 'av_3k9x2m7q4w8e1r5t6y0u2i4o' : ((await ctx.world.kickoffJob('prompt-avatar').catch(() => undefined))?.id ?? 'av_3k9x2m7q4w8e1r5t6y0u2i4o');
    for (const path of ['/me', `/avatars/${id}`, '/v2/me']) {
      const exchange = await ctx.http.send({ key: 'main', method: 'GET', path, note: 'an unversioned path' });
      if (isSuccess(exchange)) {
        fail({ clause: 'VER-PREFIX', message: `GET ${path} answered ${exchange.status}: an endpoint outside /v1`, expected: '404', received: describe(exchange), fix: 'Serve the API under /v1 only.', exchanges: [exchange] });
      }
    }
    // Links the service hands out point under /v1 too.
    for (const exchange of ctx.http.log.filter((e) => e.responseHeaders.location)) {
      const path = new URL(exchange.responseHeaders.location!, ctx.http.baseUrl).pathname;
      if (!path.startsWith('/v1/')) {
        fail({ clause: 'VER-PREFIX', message: `a Location header points outside /v1: ${exchange.responseHeaders.location}`, expected: '/v1/…', received: path, fix: 'Build every link with the /v1 prefix.', exchanges: [exchange] });
      }
    }
  },
});
