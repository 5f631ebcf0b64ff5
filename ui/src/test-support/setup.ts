// Testing Library cleans the document after each test. jsdom lays nothing out: the virtualised
// list's scroll box (.rows) is given the size a browser window would give it, so the virtualiser
// has a viewport to fill (the e2e run checks the real layout in Chromium).
import { afterEach } from 'vitest';
import { cleanup, configure } from '@testing-library/react';
import { answer, fakeFetch } from './http';

// The machine running the tests is shared and often busy: wait longer than 1 s for a page to answer.
configure({ asyncUtilTimeout: 10_000 });

afterEach(() => {
  cleanup();
  answer(() => undefined);
});

// Installed before any module creates the client (it keeps the fetch it is given).
globalThis.fetch = fakeFetch as typeof fetch;

const sized = (el: Element, value: number) => (el.classList.contains('rows') ? value : 0);
Object.defineProperty(HTMLElement.prototype, 'clientHeight', {
  configurable: true,
  get(this: HTMLElement) {
    return sized(this, 800);
  },
});
Object.defineProperty(HTMLElement.prototype, 'clientWidth', {
  configurable: true,
  get(this: HTMLElement) {
    return sized(this, 1000);
  },
});

// jsdom has no ResizeObserver (React Flow and the tiles measure their box with it): one that never
// reports, as a browser would for a box that does not change.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
} as unknown as typeof ResizeObserver;
