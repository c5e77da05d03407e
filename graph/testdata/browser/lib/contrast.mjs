// WCAG 2 contrast of a page as Chromium draws it, from computed styles.

/**
 * contrastReport runs in the page (page.evaluate(contrastReport)) and measures, for
 * everything visible:
 * - text: each element's own text (a select's: its selected option), and the text of its
 *   ::before, against what it is drawn on (its background and its ancestors', composed);
 *   needs 4.5:1, 3:1 when large (24px, or 18.66px bold). Disabled controls are exempt, as
 *   WCAG has them.
 * - boundary: the bottom border of each enabled button and select that has one (what
 *   outlines it, or underlines the selected tab), against the background around it; 3:1.
 * - graphic: a ::before drawn as a filled shape (the unread dot); 3:1.
 * - focus: the focus ring of the focused element, when it shows one; 3:1.
 * Each item is { what, kind, ratio, need, fg, bg }, ratios rounded down to 2 decimals.
 */
export function contrastReport() {
  const parse = (c) => {
    const m = /^rgba?\((.+)\)$/.exec(c);
    if (!m) throw new Error(`a colour this test cannot read: ${c}`);
    const [r, g, b, a = 1] = m[1].split(/[\s,/]+/).map(Number);
    return [r, g, b, a];
  };
  const over = ([r, g, b, a], [R, G, B]) => [r * a + R * (1 - a), g * a + G * (1 - a), b * a + B * (1 - a), 1];
  const linear = (v) => (v / 255 <= 0.04045 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
  const luminance = ([r, g, b]) => 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return Math.floor(((hi + 0.05) / (lo + 0.05)) * 100) / 100;
  };
  const hex = (c) => `#${c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, '0')).join('')}`;
  // background is the colour el is drawn on: its own background over its ancestors'.
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] === 1) return layers.reverse().reduce((under, top) => over(top, under));
    }
    throw new Error(`nothing opaque behind ${describe(el)}`);
  };
  const describe = (el) => `${el.tagName.toLowerCase()}${el.dataset.testid ? `[data-testid=${el.dataset.testid}]` : ''}` +
    `${el.classList.length ? `.${[...el.classList].join('.')}` : ''}${el.getAttribute('role') ? `[role=${el.getAttribute('role')}]` : ''}`;
  const visible = (el) => {
    const box = el.getBoundingClientRect();
    return el.checkVisibility({ opacityProperty: true, visibilityProperty: true }) && box.width > 1 && box.height > 1;
  };
  const items = [];
  const add = (el, kind, what, fg, bg, need) => {
    items.push({ what: `${describe(el)}${what}`, kind, ratio: ratio(over(fg, bg), bg), need, fg: hex(over(fg, bg)), bg: hex(bg) });
  };
  const textNeed = (style) => {
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (Number(style.fontWeight) >= 700 && size >= 18.66);
    return large ? 3 : 4.5;
  };

  for (const el of document.body.querySelectorAll('*')) {
    if (!visible(el) || el.closest(':disabled')) continue;
    const style = getComputedStyle(el);
    const own = el.matches('select') ? el.selectedOptions[0]?.textContent.trim()
      : [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent.trim()).join(' ').trim();
    if (own) add(el, 'text', ` "${own.slice(0, 24)}"`, parse(style.color), background(el), textNeed(style));

    const before = getComputedStyle(el, '::before');
    if (before.content !== 'none' && before.content !== 'normal') {
      const fill = parse(before.backgroundColor);
      if (fill[3] > 0) add(el, 'graphic', '::before', fill, background(el), 3);
      else if (before.content.replace(/"/g, '').trim()) add(el, 'text', `::before ${before.content}`, parse(before.color), background(el), textNeed(before));
    }

    if (el.matches('button, select') && style.borderBottomStyle !== 'none' && parseFloat(style.borderBottomWidth) > 0) {
      const border = parse(style.borderBottomColor);
      if (border[3] > 0) add(el, 'boundary', ' border', border, background(el.parentElement), 3);
    }
  }
  const focused = document.activeElement;
  if (focused && focused !== document.body && focused.matches(':focus-visible')) {
    const style = getComputedStyle(focused);
    if (style.outlineStyle !== 'none') add(focused, 'focus', ' outline', parse(style.outlineColor), background(focused.parentElement), 3);
  }
  return items;
}
