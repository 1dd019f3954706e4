// A notice that stays until the merchant dismisses it (above the config): for what must not be
// missed, such as a share link whose config could not be read or a file Open refused. The toast
// (app.js `notify`) is for what goes by: a save, an Undo.

export class Notice {
  /** @param {HTMLElement} root  index.html `#notice`: a text and a Dismiss button */
  constructor(root) {
    this.root = root;
    this.text = root.querySelector('.notice-text');
    root.querySelector('.notice-close').addEventListener('click', () => this.hide());
  }

  show(text) {
    this.text.textContent = text;
    this.root.hidden = false;
  }

  hide() {
    this.root.hidden = true;
  }
}
