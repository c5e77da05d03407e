// What a subscriber does in the development live inbox (/inbox), in a real browser, each
// checked against the server with the demo API key: messages on screen are marked seen;
// "Load more" appends the next page; the tabs (all, unread, archived) filter; opening a
// message reads it; a pressed button shows its resultContent; archiving moves a message
// to the archived tab and back; "Mark all read" zeroes the badge; and every text and
// control passes WCAG AA contrast in the light and the dark theme.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';

import { launch, loopback, step } from './lib/browser.mjs';
import { contrastReport } from './lib/contrast.mjs';
import { badge, counts, inAppPage, message, row, rows, tabFilters } from './lib/inbox.mjs';
import { Server } from './lib/server.mjs';

const subscriber = 'user-1-00000'; // the page's default
const server = new Server();
const s = {
  browser: null,
  page: null,
  requests: [],
  pageErrors: [],
  before: null, // the first page of the all tab, as the API key saw it before the page opened
};

function needsSetup() {
  if (!s.page) throw new Error('setup failed; see the first test');
}

/** check runs a step that screenshots the page when it fails. */
const check = (name, fn) => step('live-inbox-actions', () => s.page, name, fn);

/** loaded waits until the list shown has loaded (after opening, a tab or "Load more"). */
const loaded = () => s.page.waitForSelector('[data-testid="messages"][data-loaded="true"][aria-busy="false"]', { state: 'attached', timeout: 15_000 });

/** showTab clicks a tab and waits for its list. */
async function showTab(name) {
  await s.page.locator(`[role="tab"][data-tab="${name}"]`).click();
  await loaded();
  assert.equal(await s.page.locator(`[role="tab"][data-tab="${name}"]`).getAttribute('aria-selected'), 'true');
}

const ids = async () => (await rows(s.page)).map((r) => r.id);
const badgeIs = (n) => s.page.waitForSelector(`[data-testid="badge"][data-count="${n}"]`, { timeout: 15_000 });

/** contrast measures the page in one colour scheme and fails on any ratio below its need. */
async function contrast(t, scheme, focus) {
  await s.page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' });
  assert.equal(await s.page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), scheme === 'dark');
  if (focus) {
    // Focused from the keyboard, so that it shows its focus ring (:focus-visible).
    await s.page.locator(focus).focus();
    await s.page.keyboard.press('Tab');
    await s.page.keyboard.press('Shift+Tab');
  }
  const items = await s.page.evaluate(contrastReport);
  const failing = items.filter((i) => i.ratio < i.need);
  assert.deepEqual(failing, [], `${scheme}: below WCAG AA`);
  const lowest = {};
  for (const i of items) if (!lowest[i.kind] || i.ratio < lowest[i.kind].ratio) lowest[i.kind] = i;
  for (const [kind, i] of Object.entries(lowest)) t.diagnostic(`${scheme} ${kind}: lowest ${i.ratio}:1 (${i.fg} on ${i.bg}, ${i.what})`);
  return items;
}

test('setup: start the server with the demo, open /inbox', { timeout: 600_000 }, async () => {
  await server.start();
  s.before = await inAppPage(server, subscriber, tabFilters.all);
  s.browser = await launch('live-inbox-actions', s.requests);
  const page = s.browser.context.pages()[0] ?? await s.browser.context.newPage();
  page.on('pageerror', (err) => s.pageErrors.push(`uncaught: ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') s.pageErrors.push(`console: ${msg.text()}`); });
  s.page = page;
  await check('open', async () => {
    const res = await page.goto(`${server.baseURL}/inbox`, { waitUntil: 'load' });
    assert.equal(res.status(), 200);
    await page.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 30_000 });
    await loaded();
  });
});

test('the messages on screen are marked seen, the others are not', { timeout: 60_000 }, async () => {
  needsSetup();
  const shown = await s.page.locator('[data-testid="message"]').evaluateAll((lis) => lis
    .filter((li) => li.getBoundingClientRect().top < innerHeight).map((li) => li.dataset.id));
  const unseen = s.before.messages.filter((m) => !m.seen);
  const seenNow = unseen.filter((m) => shown.includes(m._id));
  const notShown = unseen.filter((m) => !shown.includes(m._id));
  assert.ok(seenNow.length > 0 && notShown.length > 0, `unseen messages on screen and below it: ${shown.length} shown`);
  await check('seen', async () => {
    for (const m of seenNow) await s.page.waitForSelector(`${row(m._id)}[data-seen="true"]`, { timeout: 15_000 });
  });
  for (const m of seenNow) assert.equal((await message(server, subscriber, m._id)).seen, true, `${m._id} was shown`);
  for (const m of notShown) assert.equal((await message(server, subscriber, m._id)).seen, false, `${m._id} was not shown`);
});

test('"Load more" appends the next page', { timeout: 60_000 }, async () => {
  needsSetup();
  const first = await inAppPage(server, subscriber, tabFilters.all);
  const next = await inAppPage(server, subscriber, tabFilters.all, 20, first.endCursor);
  assert.ok(first.hasNextPage && next.ids.length > 0, 'the demo subscriber has more than a page of in-app messages');
  await check('load more', async () => {
    assert.deepEqual(await ids(), first.ids, 'the first page');
    await s.page.locator('[data-testid="load-more"]').click();
    await loaded();
    assert.deepEqual(await ids(), [...first.ids, ...next.ids], 'the first page, then the next');
    assert.deepEqual([...new Set((await rows(s.page)).map((r) => r.channel))], ['in_app'], 'in-app only');
    assert.equal(await s.page.locator('[data-testid="load-more"]').isHidden(), next.hasNextPage === false, 'no more to load');
  });
});

test('the tabs filter: unread, archived, all', { timeout: 60_000 }, async () => {
  needsSetup();
  const unread = await inAppPage(server, subscriber, tabFilters.unread);
  assert.ok(unread.ids.length > 0 && unread.ids.length < 20, `unread messages, fewer than a page: ${unread.ids.length}`);
  await check('unread tab', async () => {
    await showTab('unread');
    assert.deepEqual(await ids(), unread.ids);
    assert.deepEqual([...new Set((await rows(s.page)).map((r) => r.read))], ['false'], 'unread only');
    assert.equal(await s.page.locator('#panel').getAttribute('aria-labelledby'), 'tab-unread');
    assert.equal(await s.page.locator('[data-testid="load-more"]').isHidden(), true);
  });
  await check('archived tab', async () => {
    assert.equal((await counts(server, subscriber)).archived, 0, 'the demo archives nothing');
    await showTab('archived');
    assert.deepEqual(await ids(), []);
    assert.equal(await s.page.locator('[data-testid="empty"]').textContent(), 'No archived messages.');
    assert.equal(await s.page.locator('[data-testid="empty"]').isVisible(), true);
  });
  await check('keyboard', async () => {
    // One tab stop, the selected tab; arrow keys and Home move the selection.
    assert.deepEqual(await s.page.locator('[role="tab"]').evaluateAll((tabs) => tabs.map((t) => t.tabIndex)), [-1, -1, 0]);
    await s.page.locator('[role="tab"][data-tab="archived"]').focus();
    await s.page.keyboard.press('ArrowLeft');
    await loaded();
    assert.equal(await s.page.evaluate(() => document.activeElement.dataset.tab), 'unread');
    assert.deepEqual(await ids(), unread.ids);
    await s.page.keyboard.press('Home');
    await loaded();
    assert.equal(await s.page.locator('[role="tab"][data-tab="all"]').getAttribute('aria-selected'), 'true');
    assert.deepEqual(await ids(), (await inAppPage(server, subscriber, tabFilters.all)).ids, 'the all tab, from its first page');
  });
});

test('opening a message reads it and lowers the badge', { timeout: 60_000 }, async () => {
  needsSetup();
  const { unread } = await counts(server, subscriber);
  const target = (await rows(s.page)).find((r) => r.read === 'false');
  assert.ok(target, 'an unread message listed');
  await badgeIs(unread);
  await check('open', async () => {
    const open = s.page.locator(`${row(target.id)} [data-testid="open"]`);
    await open.click();
    assert.equal(await open.getAttribute('aria-expanded'), 'true');
    await s.page.waitForSelector(`${row(target.id)}[data-read="true"]`, { timeout: 15_000 });
    await badgeIs(unread - 1);
    assert.equal(await s.page.locator(`${row(target.id)} .link a`).isVisible(), true, 'opened, it shows its link');
  });
  const m = await message(server, subscriber, target.id);
  assert.equal(m.read, true);
  assert.ok(m.lastReadDate, 'stamped when read');
});

test('a pressed button shows its resultContent', { timeout: 60_000 }, async () => {
  needsSetup();
  const listed = new Set(await ids());
  const target = (await inAppPage(server, subscriber, tabFilters.all)).messages
    .find((m) => listed.has(m._id) && m.cta.action?.status === 'pending' && m.cta.action.buttons?.some((b) => b.type === 'secondary'));
  assert.ok(target, 'a message with a secondary button to press');
  const button = target.cta.action.buttons.find((b) => b.type === 'secondary');
  assert.ok(button.resultContent && button.resultContent !== button.content, `a resultContent of its own: ${JSON.stringify(button)}`);
  await check('press', async () => {
    await s.page.locator(`${row(target._id)} [data-testid="action-secondary"]`).click();
    await s.page.waitForSelector(`${row(target._id)}[data-status="done"]`, { timeout: 15_000 });
    assert.equal(await s.page.locator(`${row(target._id)} [data-testid="result"]`).textContent(), button.resultContent);
    assert.equal(await s.page.locator(`${row(target._id)} .buttons button`).count(), 0);
    assert.equal(await s.page.getByText('Action: pending').count(), 0, 'no raw status');
  });
  const m = await message(server, subscriber, target._id);
  assert.deepEqual(m.cta.action, { status: 'done', result: { type: 'secondary' } });
});

test('archiving moves a message to the archived tab, unarchiving back', { timeout: 60_000 }, async () => {
  needsSetup();
  const { unread } = await counts(server, subscriber);
  const target = (await rows(s.page)).find((r) => r.read === 'false');
  assert.ok(target, 'an unread message listed');
  await check('archive', async () => {
    await s.page.locator(`${row(target.id)} [data-testid="toggle-archived"]`).click();
    await s.page.waitForSelector(row(target.id), { state: 'detached', timeout: 15_000 });
    await badgeIs(unread - 1); // the badge counts unarchived messages
  });
  let m = await message(server, subscriber, target.id);
  assert.equal(m.archived, true);
  assert.ok(m.archivedAt, 'stamped when archived');
  await check('archived tab', async () => {
    await showTab('archived');
    assert.deepEqual(await ids(), [target.id]);
    assert.equal(await s.page.locator(`${row(target.id)} [data-testid="toggle-archived"]`).textContent(), 'Unarchive');
    await s.page.locator(`${row(target.id)} [data-testid="toggle-archived"]`).click();
    await s.page.waitForSelector(row(target.id), { state: 'detached', timeout: 15_000 });
    assert.equal(await s.page.locator('[data-testid="empty"]').isVisible(), true);
    await badgeIs(unread);
  });
  m = await message(server, subscriber, target.id);
  assert.equal(m.archived, false);
  await check('back in all', async () => {
    await showTab('all');
    assert.deepEqual(await ids(), (await inAppPage(server, subscriber, tabFilters.all)).ids);
    assert.equal(await s.page.locator(row(target.id)).count(), 1);
  });
});

test('every text and control passes WCAG AA contrast in both themes', { timeout: 60_000 }, async (t) => {
  needsSetup();
  for (const scheme of ['light', 'dark']) {
    await check(`contrast ${scheme}`, async () => {
      const items = await contrast(t, scheme, '[role="tab"][aria-selected="true"]');
      const measured = (what) => assert.ok(items.some((i) => i.what.includes(what)), `${scheme}: measured ${what}`);
      // What the page shows now: the badge, tabs, unread and read messages, buttons
      // pending and a result shown, relative times, the focus ring.
      for (const what of ['[data-testid=badge]', '[role=tab] border', 'h1', '.primary "', '.primary border',
        '[data-testid=result]', '[data-testid=time]', 'p.content', '[data-testid=message].message::before',
        '[data-testid=toggle-archived]', 'select', ' outline']) measured(what);
    });
  }
});

test('"Mark all read" zeroes the badge', { timeout: 60_000 }, async (t) => {
  needsSetup();
  assert.ok((await counts(server, subscriber)).unread > 0);
  await check('mark all read', async () => {
    await s.page.locator('[data-testid="mark-all-read"]').click();
    await badgeIs(0);
    assert.deepEqual(await badge(s.page), { text: '0', label: '0 unread messages' });
    assert.deepEqual([...new Set((await rows(s.page)).map((r) => r.read))], ['true'], 'every listed message read');
    assert.equal(await s.page.locator('[data-testid="mark-all-read"]').isDisabled(), true, 'nothing left to mark');
  });
  assert.equal((await counts(server, subscriber)).unread, 0, 'the server counts none unread');
  await check('unread tab empty', async () => {
    await showTab('unread');
    assert.deepEqual(await ids(), []);
    assert.equal(await s.page.locator('[data-testid="empty"]').textContent(), 'Nothing unread.');
    await showTab('all');
  });
  // The badge at zero has a style of its own.
  for (const scheme of ['light', 'dark']) await check(`contrast ${scheme} at zero`, () => contrast(t, scheme));
});

test('the page asked nothing of other hosts and raised no error', () => {
  needsSetup();
  assert.deepEqual(s.requests.filter((url) => !loopback(url)), [], 'requests to other hosts');
  assert.deepEqual(s.pageErrors, [], 'page errors');
});

after(async () => {
  await s.browser?.close();
  await server.stop();
});
