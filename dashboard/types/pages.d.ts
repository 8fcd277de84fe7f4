// What tsc --checkJs needs beside the generated wire types (types/wire.js): the pages'
// DOM reads are loose by design (they find an element, then read its value), so these say
// what every element the pages query may carry, rather than a cast at each query.

interface Element {
  value: string;
  checked: boolean;
  disabled: boolean;
  hidden: boolean;
  href: string;
  dataset: DOMStringMap;
  focus(): void;
  _html?: string;  // setHtml's cache of the last HTML written
}

interface HTMLElement {
  value: string;
  checked: boolean;
  disabled: boolean;
  open: boolean;
}

interface EventTarget {
  closest(selectors: string): HTMLElement | null;
  id: string;
  dataset: DOMStringMap;
  classList: DOMTokenList;
  card?: HTMLInputElement;  // a form's "card" field (the count page)
}

interface Error {
  status?: number;
  code?: string;
  rule?: string;
  params?: Record<string, unknown>;
}

interface Window {
  __seat?: unknown;
  __cauldron?: unknown;
}
