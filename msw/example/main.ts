// The example page: the sandbox's handlers in a service worker, the typed client in the
// page. Create an avatar, watch it go from queued to ready; "Skip ahead" moves the
// account's sandbox clock through the contract's own operation, so nobody waits.
import { setupWorker } from 'msw/browser';
import { createAvatarClient } from '../../client/src/index.ts';
import { createSandbox } from '../src/index.ts';

/** The page's globals, typed here: the project's types are Node's, not the DOM's. */
interface Element {
  textContent: string | null;
  disabled?: boolean;
  hidden?: boolean;
  src?: string;
  dataset: Record<string, string>;
  addEventListener(type: 'click', listener: () => void): void;
}
const { document, location } = globalThis as unknown as {
  document: { getElementById(id: string): Element | null; body: Element };
  location: { origin: string };
};

/** Each answer the page got, for a test to hold to the contract. */
interface SeenAnswer {
  method: string;
  url: string;
  status: number;
  headers: [string, string][];
  text: string;
}

const answers: SeenAnswer[] = [];
const headerList = (headers: Headers) => {
  const list: [string, string][] = [];
  headers.forEach((value, name) => list.push([name, value]));
  return list;
};
async function recorded(request: Request): Promise<Response> {
  const response = await fetch(request);
  answers.push({ method: request.method, url: request.url, status: response.status, headers: headerList(response.headers), text: await response.clone().text() });
  return response;
}

const sandbox = createSandbox({ baseUrl: location.origin });
await setupWorker(...sandbox.handlers).start({ onUnhandledRequest: 'bypass', quiet: true });
const account = await sandbox.createAccount({ credits: 100 });
const makeClient = (apiKey: string) => createAvatarClient({ baseUrl: location.origin, apiKey, retry: false, fetch: recorded });
const client = makeClient(account.apiKey);

const $ = (id: string) => document.getElementById(id)!;
let avatarId: string | undefined;

async function show(): Promise<void> {
  if (avatarId) {
    const { data } = await client.getAvatar(avatarId);
    $('status').textContent = data?.status ?? 'unknown';
    // The preview is served by the worker too, as the service serves it: no key needed.
    if (data?.preview_image_url && $('preview').hidden) Object.assign($('preview'), { src: data.preview_image_url, hidden: false });
  }
  const me = await client.getMe();
  $('credits').textContent = String(me.data?.credits.available ?? '-');
}

$('create').addEventListener('click', async () => {
  const { data, error } = await client.createAvatar({ type: 'prompt', name: 'Page avatar', prompt: 'A presenter in a blue shirt' });
  if (error) {
    $('status').textContent = `refused: ${error.code}`;
    return;
  }
  avatarId = data!.id;
  $('avatar').textContent = avatarId;
  await show();
});
$('skip').addEventListener('click', async () => {
  await client.advanceSandboxClock({ seconds: 5 });
  await show();
});
// A polling UI: the status follows the job as time passes, here in real time.
setInterval(() => void show(), 1000);

for (const id of ['create', 'skip']) $(id).disabled = false;
Object.assign(globalThis, { avatarDemo: { sandbox, account, makeClient, answers } });
document.body.dataset.ready = 'true';
