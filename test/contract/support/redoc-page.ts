// Reads what a Redoc 3 page shows. Redoc 3 renders one tag at a time (the route in
// the URL hash) and mounts each operation lazily when it scrolls into view, so "the
// page shows X" means: open the tag's route, scroll every placeholder into view, then
// read the operations it mounted.
import type { Page } from 'playwright-core';

export interface RenderedItem {
  sectionId: string;
  heading: string;
  // Every text node of the item joined by single spaces. Redoc splits a method badge
  // and its path into two elements, which textContent would glue together.
  text: string;
}

const CONTENT = '#api-content';

// The few DOM members the browser-side functions use. tsconfig carries no DOM library
// (the server code must not see browser globals), and Playwright runs these functions
// from their source text, so describing them here is all the typing they need.
interface DomNode {
  nodeValue: string | null;
}
interface DomElement extends DomNode {
  getAttribute(name: string): string | null;
  querySelector(selector: string): DomElement | null;
}
interface BrowserGlobals {
  location: { hash: string };
  document: { createTreeWalker(root: DomNode, whatToShow: number): { nextNode(): DomNode | null } };
}

// The route of a sidebar entry (e.g. "/avatar-videos" for "Avatar videos").
export async function routeOfSidebarEntry(page: Page, label: string): Promise<string> {
  const href = await page.getByRole('link', { name: label, exact: true }).first().getAttribute('href');
  if (!href?.startsWith('/')) throw new Error(`sidebar entry "${label}" has no route (href=${href})`);
  return href;
}

export async function renderRoute(page: Page, route: string): Promise<RenderedItem[]> {
  // Setting the hash works before and after React hydrates: the router reads it on start
  // and listens for changes afterwards (a click could land before hydration and leave
  // the page for file:///<route>).
  await page.evaluate((hash) => {
    (globalThis as unknown as BrowserGlobals).location.hash = hash;
  }, `#${route}`);
  const inRoute = `${CONTENT} [data-section-id^="${route}/"]`;
  await page.waitForSelector(inRoute, { state: 'attached', timeout: 10_000 });
  for (let guard = 0; guard < 200; guard++) {
    const placeholder = page.locator(`${inRoute}:not(:has(*))`).first();
    if ((await placeholder.count()) === 0) break;
    const id = await placeholder.getAttribute('data-section-id');
    await placeholder.scrollIntoViewIfNeeded();
    await page.waitForSelector(`${CONTENT} [data-section-id="${id}"]:has(*)`, { state: 'attached', timeout: 10_000 });
  }
  return page.$$eval(`${CONTENT} [data-item-kind][data-section-id^="${route}/"]`, (items: DomElement[]) => {
    const SHOW_TEXT = 4; // NodeFilter.SHOW_TEXT
    const joined = (node: DomNode): string => {
      const walker = (globalThis as unknown as BrowserGlobals).document.createTreeWalker(node, SHOW_TEXT);
      const parts: string[] = [];
      for (let n = walker.nextNode(); n; n = walker.nextNode()) parts.push(n.nodeValue ?? '');
      return parts.join(' ').replace(/\s+/g, ' ').trim();
    };
    return items.map((item) => {
      const heading = item.querySelector('h1, h2');
      return {
        sectionId: item.getAttribute('data-section-id') ?? '',
        heading: heading ? joined(heading) : '',
        text: joined(item),
      };
    });
  });
}
