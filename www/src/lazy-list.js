// A list of many cards (a 1,000-rule config) that stays fast: every item gets an empty slot,
// a card is built only when its slot scrolls into view, and a built card is rebuilt only when its
// item's key changes. The slot elements stay in place, so scrolling and focus survive updates.
// Many new items (a pasted 1,000-rule config) get their slots `CHUNK` at a time, one chunk a frame:
// the browser styles and lays out a thousand new slots in one task otherwise (merchant test 4,
// about half of its longest task); a slot asked for (`element`) is made at once.

/** Slots made per frame when many items arrive at once. */
const CHUNK = 150;

export class LazyList {
  /**
   * @param {HTMLElement} list  the <ol>/<ul> to fill (inside a scroll container `root`)
   * @param {{root?: HTMLElement, key: (item) => string, render: (item, slot: HTMLElement) => void,
   *          slotClass?: string, estimate?: number, eager?: number}} options  lists of at most
   *          `eager` items are built at once (nothing moves while scrolling a short list)
   */
  constructor(list, { root = null, key, render, slotClass = 'lazy-slot', estimate = 90, eager = 60 }) {
    this.eager = eager;
    this.list = list;
    this.key = key;
    this.render = render;
    this.slotClass = slotClass;
    this.estimate = estimate;
    this.slots = [];
    this.items = [];
    this.growing = null; // the frame that makes the next chunk of slots
    this.observer = this.observe(root);
  }

  observe(root) {
    return new IntersectionObserver((entries) => this.onIntersect(entries), { root, rootMargin: '400px 0px' });
  }

  /**
   * Changes the scroll container whose view decides which cards are built: a list that scrolls
   * inside the page (a wide window) or the page itself (null: a phone, where the list does not
   * scroll on its own).
   */
  setRoot(root) {
    this.observer.disconnect();
    this.observer = this.observe(root);
    for (const slot of this.slots) if (!slot.built) this.observer.observe(slot.el);
  }

  onIntersect(entries) {
    let built = false;
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      const slot = this.slots[Number(entry.target.dataset.slot)];
      if (slot && !slot.built) {
        this.build(slot);
        built = true;
      }
    }
    // Cards built above a revealed item change its place: reveal it again for a moment.
    const r = this.revealing;
    if (built && r && performance.now() < r.until) this.reveal(r.i, r.container, 2, false);
  }

  build(slot) {
    slot.built = true;
    // A built card stays built: the observer computes intersections of the unbuilt ones only.
    this.observer.unobserve(slot.el);
    slot.builtKey = slot.key;
    slot.el.style.minHeight = '';
    this.render(slot.item, slot.el);
  }

  /** Sets the items; returns how many built cards were rebuilt. */
  setItems(items) {
    this.items = items;
    let rebuilt = 0;
    while (this.slots.length > items.length) {
      const slot = this.slots.pop();
      this.observer.unobserve(slot.el);
      slot.el.remove();
    }
    for (let i = 0; i < this.slots.length; i++) rebuilt += this.assign(this.slots[i], items[i]);
    this.grow(Math.min(items.length, this.slots.length + CHUNK));
    return rebuilt;
  }

  /** Gives `slot` its item: built now when the list is short, rebuilt when its key changed. */
  assign(slot, item) {
    slot.item = item;
    slot.key = this.key(item);
    if (!slot.built && this.items.length <= this.eager) {
      this.build(slot);
    } else if (slot.built && slot.builtKey !== slot.key) {
      slot.builtKey = slot.key;
      this.render(slot.item, slot.el);
      return 1;
    }
    return 0;
  }

  /** Makes the slots of the items up to `n`; the rest follow, a chunk a frame. */
  grow(n) {
    const fragment = document.createDocumentFragment();
    const made = [];
    while (this.slots.length < Math.min(n, this.items.length)) {
      const i = this.slots.length;
      const el = document.createElement('li');
      el.className = this.slotClass;
      el.dataset.slot = String(i);
      el.style.minHeight = `${this.estimate}px`;
      const slot = { el, built: false, builtKey: null, key: null, item: null };
      this.slots.push(slot);
      fragment.append(el);
      made.push(slot);
    }
    this.list.append(fragment);
    for (const slot of made) {
      this.observer.observe(slot.el);
      this.assign(slot, this.items[Number(slot.el.dataset.slot)]);
    }
    if (this.slots.length < this.items.length && !this.growing) {
      this.growing = requestAnimationFrame(() => {
        this.growing = null;
        this.grow(this.slots.length + CHUNK);
      });
    }
  }

  /** The slot element of item `i` (built first, so it has its real height). */
  element(i) {
    if (i >= this.slots.length) this.grow(i + 1);
    const slot = this.slots[i];
    if (!slot) return null;
    if (!slot.built) this.build(slot);
    return slot.el;
  }

  /** Scrolls the list's scroll container (not the page) so that item `i` is in view. */
  reveal(i, container, tries = 3, fresh = true) {
    const el = this.element(i);
    if (!el || !container) return;
    if (fresh) this.revealing = { i, container, until: performance.now() + 1000 };
    const r = el.getBoundingClientRect();
    const c = container.getBoundingClientRect();
    if (r.top < c.top || r.bottom > c.bottom) container.scrollTop += r.top - c.top - 8;
    // Cards built around it as it comes into view change the heights above it: check again.
    if (tries > 1) requestAnimationFrame(() => this.reveal(i, container, tries - 1, false));
  }
}
