// Drawing as a table keyed on slices of state (as CodeMirror 6's state fields and `compare` avoid
// recomputing what did not change): each view declares which slices of the store's state it reads
// (`reads`), and is drawn again only when one of them is another value than at its last drawing
// (by identity: `Object.is`, item by item). The store keeps a slice's identity when its value did
// not change (store.js), so what is drawn follows what changed, not which answer arrived.
//
// The views run in the table's order (a view may draw into what an earlier one built: the legend
// before the fired rule is marked in it). A view may dispatch while it draws (the marks in the
// JSON view): app.js then runs the table again with the new state once this pass ends; each view
// sees the state as it is when its turn comes.

/**
 * @template S
 * @typedef {object} View
 * @property {string} name what it draws (for a reader and the console)
 * @property {(state: S) => unknown[]} reads the slices it draws from
 * @property {(state: S) => void} draw
 */

/**
 * The draw function of `views`: each call draws the views whose slices changed since their last
 * drawing. Nothing is drawn for the slices of `initial` (the state before anything arrived).
 * @template S
 * @param {View<S>[]} views
 * @param {S} initial
 * @returns {(get: () => S) => string[]} draws with the state `get()` returns at each view's turn;
 *   returns the names of the views drawn
 */
export function drawTable(views, initial) {
  /** @type {Map<View<S>, unknown[]>} */
  const seen = new Map(views.map((view) => [view, view.reads(initial)]));
  return (get) => {
    const drawn = [];
    for (const view of views) {
      const state = get();
      const slices = view.reads(state);
      const before = seen.get(view);
      if (before.length === slices.length && slices.every((slice, i) => Object.is(slice, before[i]))) continue;
      seen.set(view, slices);
      view.draw(state);
      drawn.push(view.name);
    }
    return drawn;
  };
}
