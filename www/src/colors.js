// Each rule's colour (its swatch on the card, in the Why panel, the map and its legend), by the
// rule's id, not its place: a rule keeps its colour when it is moved, when rules above it are
// added or deleted, and while its id is being retyped. Rules first seen get the palette in order
// (rule 1 the first colour, rule 2 the second, ...), so a config looks the same on every load.

import { NO_NUDGE_COLOR, PALETTE } from './util.js';

export class RuleColors {
  constructor(palette = PALETTE) {
    this.palette = palette;
    this.byId = new Map(); // id -> palette index, kept after the id goes (an undo brings it back)
    this.ids = []; // the ids of the last list followed, in config order
  }

  /**
   * Follows the rules' ids in config order after an edit. An id seen before keeps its colour; a
   * new id where the last list had an id that is gone now (a rule renamed, one keystroke at a
   * time) takes over that colour; any other new id gets the colour fewest rules have.
   */
  follow(ids) {
    const last = this.ids;
    if (ids.length === last.length && ids.every((id, i) => id === last[i])) return;
    const present = new Set(ids);
    const used = new Array(this.palette.length).fill(0);
    const counted = new Set();
    for (const id of ids) {
      const c = this.byId.get(id);
      if (c !== undefined && !counted.has(id)) {
        counted.add(id);
        used[c] += 1;
      }
    }
    ids.forEach((id, i) => {
      if (this.byId.has(id)) return;
      const renamed = last[i];
      let c;
      if (renamed !== undefined && !present.has(renamed) && this.byId.has(renamed)) {
        c = this.byId.get(renamed);
      } else {
        c = used.indexOf(Math.min(...used));
      }
      this.byId.set(id, c);
      used[c] += 1;
    });
    this.ids = ids.slice();
    // Ids typed on the way to a new name pile up: forget the absent ones now and then.
    if (this.byId.size > ids.length + 1000) {
      for (const id of this.byId.keys()) if (!present.has(id)) this.byId.delete(id);
    }
  }

  /** The colour of rule `id`; null or undefined (no rule): the colour of "no nudge". */
  color(id) {
    if (id === null || id === undefined) return NO_NUDGE_COLOR;
    let c = this.byId.get(id);
    if (c === undefined) {
      // Not followed yet (an answer ahead of the list): its place's colour, kept from now on.
      const at = this.ids.indexOf(id);
      c = (at < 0 ? this.byId.size : at) % this.palette.length;
      this.byId.set(id, c);
    }
    return this.palette[c];
  }
}

/** The page's one set of rule colours. */
export const ruleColors = new RuleColors();

/** The colour of rule `id` (see RuleColors). */
export function ruleColor(id) {
  return ruleColors.color(id);
}
