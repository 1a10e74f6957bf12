// WH-HTTPS-PUBLIC at request time: production refuses plain http and non-public hosts.
import { describe, expect, it } from 'vitest';
import { isPublicIp } from '../../src/domain/addresses.ts';
import { checkWebhookUrl } from '../../src/domain/webhookUrl.ts';

describe('isPublicIp', () => {
  it.each([
    ['127.0.0.1'], ['10.1.2.3'], ['172.16.0.1'], ['172.31.255.255'], ['192.168.1.1'], ['169.254.169.254'], ['100.64.0.1'],
    ['0.0.0.0'], ['224.0.0.1'], ['255.255.255.255'], ['::1'], ['::'], ['fc00::1'], ['fd12:3456::1'], ['fe80::1'], ['ff02::1'],
    ['::ffff:127.0.0.1'], ['::ffff:169.254.169.254'], ['::ffff:7f00:1'], ['::ffff:a00:1'], ['64:ff9b::10.0.0.1'], ['[::1]'],
    // Special-purpose IPv4 blocks beyond the private ones.
    ['192.0.0.8'], ['192.0.2.1'], ['198.18.0.1'], ['198.51.100.7'], ['203.0.113.9'], ['240.0.0.1'],
    // Every IPv4-in-IPv6 form, whatever it carries: compatible (and its hex spelling, as the
    // URL parser writes it), SIIT, NAT64 (well-known and local-use), 6to4, Teredo.
    ['::127.0.0.1'], ['::7f00:1'], ['::808:808'], ['::ffff:0:7f00:1'], ['::ffff:8.8.8.8'], ['64:ff9b::808:808'], ['64:ff9b:1::1'],
    ['2002:7f00:1::1'], ['2002:808:808::1'], ['2001:0:4136:e378:8000:63bf:80ff:fffe'],
    // Special-purpose IPv6 blocks: discard, documentation, ORCHIDv2, benchmarking.
    ['100::1'], ['2001:db8::1'], ['3fff::1'], ['2001:20::1'], ['2001:2::1'],
  ])('%s is not public', (ip) => {
    expect(isPublicIp(ip)).toBe(false);
  });

  it.each([['8.8.8.8'], ['1.1.1.1'], ['172.32.0.1'], ['2606:4700:4700::1111'], ['[2a00:1450:4001:82b::200e]']])('%s is public', (ip) => {
    expect(isPublicIp(ip)).toBe(true);
  });

  it('is false for something that is not an address', () => {
    expect(isPublicIp('example.com')).toBe(false);
  });
});

describe('checkWebhookUrl in production', () => {
  it.each([
    ['http://hooks.example.com/x', 'https_required'],
    ['https://localhost/x', 'public_host_required'],
    ['https://api.localhost/x', 'public_host_required'],
    ['https://printer.local/x', 'public_host_required'],
    ['https://intranet/x', 'public_host_required'],
    ['https://127.0.0.1/x', 'public_host_required'],
    ['https://10.0.0.5:8443/x', 'public_host_required'],
    ['https://169.254.169.254/latest/meta-data', 'public_host_required'],
    ['https://[::1]/x', 'public_host_required'],
    ['https://[::ffff:127.0.0.1]/x', 'public_host_required'],
    ['https://[::127.0.0.1]/x', 'public_host_required'],
    ['https://[::ffff:0:7f00:1]/x', 'public_host_required'],
    ['https://[2002:7f00:1::1]/x', 'public_host_required'],
    ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x', 'public_host_required'],
    ['https://[64:ff9b::7f00:1]/x', 'public_host_required'],
    ['https://localhost./x', 'public_host_required'],
    ['https://localhost../x', 'public_host_required'],
    ['https://vm../x', 'public_host_required'],
    ['https://printer.local.../x', 'public_host_required'],
    ['https://metadata.google.internal../x', 'public_host_required'],
    ['https://168.63.129.16/machine', 'public_host_required'],
    ['https://metadata.goog/computeMetadata/v1/', 'public_host_required'],
    ['https://user:pw@hooks.example.com/x', 'format'],
    ['gopher://hooks.example.com/x', 'https_required'],
  ])('refuses %s (%s)', (url, rule) => {
    expect(checkWebhookUrl(url, 'production')).toMatchObject({ field: 'webhook_url', rule });
  });

  it.each([['https://hooks.example.com/avatar-events'], ['https://8.8.8.8/x'], ['https://[2606:4700::1]/x']])('accepts %s', (url) => {
    expect(checkWebhookUrl(url, 'production')).toBeNull();
  });
});

describe('checkWebhookUrl in sandbox', () => {
  it.each([['http://127.0.0.1:4000/hooks'], ['http://localhost/x'], ['https://hooks.example.com/x']])('accepts %s for local development', (url) => {
    expect(checkWebhookUrl(url, 'sandbox')).toBeNull();
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data'],
    ['http://169.254.1.1:8080/x'],
    ['http://[fe80::1]/x'],
    ['http://[febf::ffff]/x'],
    ['http://[::ffff:169.254.169.254]/x'],
    ['http://[::ffff:a9fe:a9fe]/x'],
    ['http://[fd00:ec2::254]/latest'],
    ['http://100.100.100.200/latest'],
    ['http://168.63.129.16/machine'],
    ['http://metadata.google.internal/computeMetadata/v1/'],
    ['http://METADATA.google.internal../computeMetadata/v1/'],
    ['http://metadata/x'],
    ['http://instance-data.ec2.internal/latest'],
  ])('refuses the link-local or metadata host of %s', (url) => {
    expect(checkWebhookUrl(url, 'sandbox')).toMatchObject({ field: 'webhook_url', rule: 'link_local_refused' });
  });

  it.each([['http://10.0.0.5/x'], ['http://192.168.1.20:8080/x'], ['http://[fd12:3456::1]/x'], ['http://[::1]:4000/x'], ['http://host.docker.internal/x'], ['http://vm/x']])(
    'keeps private and loopback receivers: %s',
    (url) => {
      expect(checkWebhookUrl(url, 'sandbox')).toBeNull();
    },
  );

  it('still refuses schemes other than http and https', () => {
    expect(checkWebhookUrl('file:///etc/passwd', 'sandbox')).toMatchObject({ rule: 'https_required' });
  });
});
