import { describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig, startWarnings } from '../src/config.ts';

describe('loadConfig', () => {
  it('defaults to a sandbox server on port 3000 with its store under the working directory', () => {
    const c = loadConfig({}, '/srv/app');

    expect(c).toMatchObject({ port: 3000, mode: 'sandbox', dataDir: '/srv/app/data', publicBaseUrl: 'http://localhost:3000', readCacheMb: 4 });
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT must be an integer from 0 to 65535 \(got "eighty"\)/],
    [{ PORT: '70000' }, /PORT/],
    [{ SERVICE_MODE: 'prod' }, /SERVICE_MODE must be one of sandbox, production/],
    [{ ENGINE_AVATAR_MS: '-1' }, /ENGINE_AVATAR_MS/],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, /PUBLIC_BASE_URL/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ READ_CACHE_MB: '1.5' }, /READ_CACHE_MB must be an integer from 0 to 4096 \(got "1.5"\)/],
    [{ ROLE: 'worker', DATABASE_URL: 'postgres://db/x', REDIS_URL: 'redis://cache' }, /ROLE=worker needs PUBLIC_BASE_URL/],
    [{ SERVICE_MODE: 'production' }, /^SERVICE_MODE=production needs PUBLIC_BASE_URL [^\n]*$/],
  ])('refuses %o naming the variable and the rule', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('keeps the answers kept within a quarter of the heap limit the process runs with', () => {
    expect(loadConfig({ READ_CACHE_MB: '76' }, '/srv/app', 304).readCacheMb).toBe(76);
    expect(() => loadConfig({ READ_CACHE_MB: '77' }, '/srv/app', 304)).toThrow(
      /READ_CACHE_MB \(77\) must be at most a quarter of this process's heap limit \(304 MB, so 76\).*--max-old-space-size/,
    );
  });

  it('names the workers of a process that has them, and none for an API-only one', () => {
    const scaled = { DATABASE_URL: 'postgres://db/x', REDIS_URL: 'redis://cache', PUBLIC_BASE_URL: 'https://api.example.com' };

    expect(describeConfig(loadConfig({ ...scaled, ROLE: 'worker' }))).toContain('workers=');
    expect(describeConfig(loadConfig({ ...scaled, ROLE: 'api' }))).not.toContain('workers=');
  });

  it('summarises itself in one line', () => {
    const line = describeConfig(loadConfig({ PORT: '8080', SERVICE_MODE: 'production', PUBLIC_BASE_URL: 'https://avatars.example.com' }));

    expect(line).toContain('mode=production');
    expect(line).not.toContain('\n');
  });
});

describe('startWarnings', () => {
  it.each([['0.0.0.0'], ['::'], ['192.168.1.20'], ['example.internal']])('says in one line that a sandbox listening on %s is reachable beyond loopback, naming both ways out', (host) => {
    const lines = startWarnings(loadConfig({ HOST: host }));

    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^warning: sandbox mode .*beyond loopback on ${host.replace(/\./g, '\\.')}: .*SERVICE_MODE=production.*HOST=127\\.0\\.0\\.1`));
    expect(lines[0]).not.toContain('\n');
  });

  it.each([['127.0.0.1'], ['127.0.0.2'], ['::1'], ['[::1]'], ['localhost'], ['LOCALHOST.']])('says nothing of a sandbox on loopback (%s)', (host) => {
    expect(startWarnings(loadConfig({ HOST: host }))).toEqual([]);
  });

  it('says nothing of a production server, wherever it listens', () => {
    expect(startWarnings(loadConfig({ HOST: '0.0.0.0', SERVICE_MODE: 'production', PUBLIC_BASE_URL: 'https://avatars.example.com' }))).toEqual([]);
  });
});
