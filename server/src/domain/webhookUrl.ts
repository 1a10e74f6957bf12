import { productionRefusal, sandboxRefusal } from './addresses.ts';
import type { FieldError } from './errors.ts';

export type ServiceMode = 'sandbox' | 'production';

/**
 * Request-time check of a webhook_url beyond its schema (WH-HTTPS-PUBLIC). Production
 * demands https:// and a host that is not local; names are resolved and checked again
 * at delivery time. Sandbox mode, for local development, accepts http://, loopback and
 * private hosts, but never a link-local or cloud metadata one (checked again at delivery).
 */
export function checkWebhookUrl(raw: string, mode: ServiceMode, field = 'webhook_url'): FieldError | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { field, rule: 'format', message: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { field, rule: 'https_required', message: 'must use https://' };
  }
  if (url.username || url.password) {
    return { field, rule: 'format', message: 'must not carry credentials' };
  }
  if (mode === 'sandbox') {
    const refused = sandboxRefusal(url);
    return refused ? { field, rule: refused.rule, message: 'must not name a link-local or cloud metadata host' } : null;
  }
  const refused = productionRefusal(url);
  if (!refused) return null;
  return { field, rule: refused.rule, message: refused.rule === 'https_required' ? 'must use https://' : 'must name a public host' };
}
