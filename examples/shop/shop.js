// The test shop's own script (examples/shop): its cart, its checkout, its single-page guide, and
// the callbacks its storefront tag names (data-on-chat-open, data-on-error).
const status = (text) => {
  const el = document.getElementById('status');
  if (el) el.textContent = text;
};

// The callbacks the <script data-...> tag names; errors are kept for the tests to read.
window.nudgeErrors = [];
window.shopNudgeError = (e) => window.nudgeErrors.push({ code: e.code, message: e.message });
window.openShopChat = (nudge) => {
  window.chatOpened = (window.chatOpened || 0) + 1;
  status(`Chat opened: ${nudge.ruleId}`);
};

document.addEventListener('click', (event) => {
  const target = event.target instanceof Element ? event.target : null;
  if (!target) return;
  if (target.closest('#add-to-cart')) {
    const n = Number(localStorage.getItem('shop.cart') || 0) + 1;
    localStorage.setItem('shop.cart', String(n));
    window.nudgeRules?.addToCart();
    status(`Added to cart (${n} item${n === 1 ? '' : 's'})`);
  } else if (target.closest('#place-order')) {
    event.preventDefault();
    window.nudgeRules?.purchase();
    localStorage.setItem('shop.cart', '0');
    status('Thank you for your order!');
  } else {
    // The guide is a single-page section: its links change the page with pushState.
    const link = target.closest('a[data-spa]');
    if (link) {
      event.preventDefault();
      history.pushState({}, '', link.getAttribute('href'));
      renderGuide();
    }
  }
});

const GUIDE = {
  '/guide': ['Style guide', 'Pick a topic: how our shirts fit, and how to care for linen.'],
  '/guide/fit': ['How our shirts fit', 'Our shirts run true to size; between two sizes, take the larger.'],
  '/guide/care': ['Caring for linen', 'Wash cool, dry flat, iron while damp.'],
};

function renderGuide() {
  const el = document.getElementById('guide');
  if (!el) return;
  const [title, text] = GUIDE[location.pathname.replace(/\/+$/, '')] || ['Not found', 'No such guide page.'];
  el.querySelector('h1').textContent = title;
  el.querySelector('p').textContent = text;
  document.title = `${title} | Linen & Co.`;
}
window.addEventListener('popstate', renderGuide);
renderGuide();
