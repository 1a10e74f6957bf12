// The Avatar Service as Mock Service Worker handlers: the service's own rules, in the
// page or the test process, with no server to run. See msw/README.md.
import type { HttpHandler } from 'msw';
import { createHandlers } from './handlers.ts';
import { Sandbox, type SandboxOptions } from './sandbox.ts';

export { Sandbox, type AccountOptions, type SandboxAccount, type SandboxClock, type SandboxOptions } from './sandbox.ts';
export { createHandlers } from './handlers.ts';

export type MockedService = Sandbox & {
  /**
   * One handler per operation of the contract (and HEAD beside each GET), and the server's
   * 405 or 404 for any other method or path under /v1 and /files.
   */
  readonly handlers: HttpHandler[];
};

/** A sandbox of the service and its handlers, to give to `setupServer` (msw/node) or `setupWorker` (msw/browser). */
export function createSandbox(options: SandboxOptions = {}): MockedService {
  const sandbox = new Sandbox(options);
  return Object.assign(sandbox, { handlers: createHandlers(sandbox) });
}
