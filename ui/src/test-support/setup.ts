// Testing Library cleans the document after each test. jsdom lays nothing out: the virtualised
// list's scroll box (.rows) is given the size a browser window would give it, so the virtualiser
// has a viewport to fill (the e2e run checks the real layout in Chromium).
import { afterEach } from 'vitest';
import { cleanup } from '@testing-library/react';

afterEach(() => cleanup());

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
