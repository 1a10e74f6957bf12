// The docs site: the guides of docs/ in reading order, built by `npm run docs`
// (scripts/docs.ts), which stages them with the pages made from the repository (the
// changelog, the benchmark's latest report) and puts the API reference (Redoc) beside
// the site under reference/. Everything a page needs is in the build: VitePress's default
// theme ships its own font and local search indexes the pages at build time, so the site
// neither builds nor renders with a network.
import { defineConfig } from 'vitepress';

// A site published under a path (a GitHub Pages project site is /<repository>/) sets DOCS_BASE.
const base = process.env.DOCS_BASE ?? '/';

export const GUIDES = [
  { text: 'Getting started', link: '/getting-started' },
  { text: 'Webhooks', link: '/webhooks' },
  { text: 'Rate limits and credits', link: '/rate-limits-and-credits' },
  { text: 'The sandbox clock', link: '/sandbox-clock' },
  { text: 'Running the server', link: '/running-the-server' },
  { text: 'Proving an implementation conforms', link: '/conformance' },
  { text: 'Checking a receiver and a client', link: '/receivers-and-clients' },
  { text: 'Mocking: Prism and MSW', link: '/mocking' },
  { text: 'The contract and its changes', link: '/contract' },
  { text: 'Changelog', link: '/changelog' },
  { text: 'Benchmarks', link: '/benchmarks' },
  { text: 'Building and publishing these docs', link: '/publishing' },
];

export default defineConfig({
  title: 'Avatar service',
  description: 'An OpenAPI-first reference for an asynchronous avatar-video generation API: guides and API reference.',
  base,
  cleanUrls: false,
  lastUpdated: false,
  // Pages are linked to the repository's own files (README.md, bench/, openapi/README.md...):
  // those are outside the site and are checked by the docs test instead.
  ignoreDeadLinks: [/^\.\.\//],
  themeConfig: {
    nav: [
      { text: 'Guides', link: '/getting-started' },
      // Redoc's page, built beside the site: a plain link, not a route of the site.
      { text: 'API reference', link: `${base}reference/index.html`, target: '_self' },
      { text: 'Changelog', link: '/changelog' },
    ],
    sidebar: [
      { text: 'Guides', items: GUIDES },
      { text: 'Reference', items: [{ text: 'API reference (Redoc)', link: `${base}reference/index.html`, target: '_self' }] },
    ],
    search: { provider: 'local' },
    outline: { level: [2, 3] },
  },
});
