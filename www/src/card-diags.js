// The engine's findings on the rule cards and the site settings: one list per field, filled with
// the findings in the card's words (card-words.js), each drawn by the rules editor's `diagItem`.

import { h } from './util.js';

/** An empty list for the engine's findings about one field (filled by `showDiags`). */
export function diagList() {
  return h('ul', { class: 'card-errors', hidden: true });
}

/** Fills a field's list with its findings (in card words), hidden when there are none. */
export function showDiags(list, words, editor) {
  list.hidden = !words.length;
  list.replaceChildren(...words.map((w) => editor.diagItem(w)));
}
