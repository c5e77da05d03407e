// The live inbox: one subscriber's in-app messages in three tabs (all, unread, archived),
// listed a page at a time with messagesConnection and kept up to date by the
// messageEvents subscription; the unread badge follows the messageCounts subscription.
// Both run over graphql-ws (the global graphqlWs). A message is marked seen when it is
// shown and read when it is opened. The page holds no API key: it asks the server's
// development helper for a session token scoped to the subscriber, and sends it as a
// Bearer token with every request and in the WebSocket's connection_init.
(function () {
  'use strict';
  const config = JSON.parse(document.getElementById('inbox-config').textContent);
  const subscriberId = new URLSearchParams(location.search).get('subscriberId') || config.subscribers[0] || '';

  const $ = (selector, root = document) => root.querySelector(selector);
  const list = $('[data-testid="messages"]');
  const panel = $('#panel');
  const empty = $('[data-testid="empty"]');
  const more = $('[data-testid="load-more"]');
  const markAll = $('[data-testid="mark-all-read"]');
  const badge = $('[data-testid="badge"]');
  const errorBox = $('[data-testid="error"]');
  const connection = $('[data-testid="connection"]');
  const tabButtons = [...document.querySelectorAll('[role="tab"]')];
  const rowTemplate = document.getElementById('message-row');
  const pageTitle = document.title;

  const fields = `_id createdAt channel title subject read seen archived snoozedUntil content { content }
    cta { data { url } action { status buttons { type content resultContent } result { type } } }`;
  const listQuery = `query Inbox($s: String!, $first: Int!, $after: String, $read: Boolean, $archived: Boolean, $snoozed: Boolean) {
    messagesConnection(subscriberId: $s, channel: in_app, read: $read, archived: $archived, snoozed: $snoozed, first: $first, after: $after) {
      edges { node { ${fields} } } pageInfo { hasNextPage endCursor } } }`;
  const eventsQuery = `subscription InboxEvents($s: String!) {
    messageEvents(subscriberId: $s, channel: in_app) { kind message { ${fields} } } }`;
  const countsQuery = `subscription Badge($s: String!) { messageCounts(subscriberId: $s, channel: in_app) { unread } }`;
  const markMutation = `mutation Mark($s: String!, $ids: [ID!]!, $read: Boolean, $seen: Boolean, $archived: Boolean) {
    markMessages(subscriberId: $s, messageIds: $ids, read: $read, seen: $seen, archived: $archived) { ${fields} } }`;
  const markAllMutation = `mutation MarkAllRead($s: String!) {
    markAllMessages(subscriberId: $s, channel: in_app, where: { read: false }, read: true) { done } }`;
  // Pressing a button acts on the message, which also reads it: both in one request.
  const pressMutation = `mutation Press($s: String!, $id: ID!, $type: ButtonType!, $seen: Boolean) {
    markMessageAction(subscriberId: $s, messageId: $id, type: $type, status: done) { _id }
    markMessages(subscriberId: $s, messageIds: [$id], read: true, seen: $seen) { ${fields} } }`;

  const snoozed = (m) => Boolean(m.snoozedUntil) && Date.parse(m.snoozedUntil) > Date.now();
  // Each tab's filter, and whether a message changed by an event belongs in it. The unread
  // tab keeps a listed message that becomes read, so opening one does not take it away.
  const tabs = {
    all: { filter: { archived: false, snoozed: false }, keeps: (m) => !m.archived && !snoozed(m), empty: 'No messages yet. New ones appear here as they arrive.' },
    unread: { filter: { read: false, archived: false, snoozed: false }, keeps: (m, listed) => !m.archived && !snoozed(m) && (listed || !m.read), empty: 'Nothing unread.' },
    archived: { filter: { archived: true }, keeps: (m) => m.archived, empty: 'No archived messages.' },
  };

  let tab = 'all';
  /** rows maps a listed message's _id to its list item. */
  const rows = new Map();
  /** page is where the listed messages end: { hasNextPage, endCursor }. */
  let page = { hasNextPage: false, endCursor: null };
  /** view counts the lists loaded, so an answer for a tab no longer shown is dropped. */
  let view = 0;
  /** pending holds the events that arrive while a list loads, applied after it. */
  let pending = null;

  function showError(err) {
    errorBox.textContent = err instanceof Error ? err.message : String(err);
    errorBox.hidden = false;
  }

  function setConnection(state, text) {
    connection.dataset.state = state;
    connection.textContent = text;
  }

  // A session token for the subscriber, from the development helper; a new one shortly
  // before the old one expires.
  let session = null;
  async function token() {
    if (!session || Date.parse(session.expiresAt) - Date.now() < 60000) {
      const res = await fetch(config.sessionEndpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ subscriberId }),
      });
      const body = await res.json().catch(() => null);
      if (!res.ok || !body || !body.token) {
        throw new Error(`No session for ${subscriberId}: ${res.status} ${(body && body.message) || res.statusText}`);
      }
      session = body;
    }
    return session.token;
  }

  async function graphql(query, variables) {
    const res = await fetch(config.endpoint, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/graphql-response+json, application/json',
        Authorization: `Bearer ${await token()}`,
      },
      body: JSON.stringify({ query, variables }),
    });
    const body = await res.json().catch(() => null);
    if (!body) throw new Error(`GraphQL answered ${res.status} without a JSON body`);
    if (body.errors && body.errors.length) throw new Error(describe(body.errors));
    return body.data;
  }

  function describe(errors) {
    return errors.map((e) => (e.extensions && e.extensions.code ? `${e.extensions.code}: ${e.message}` : e.message)).join('\n');
  }

  // ago says how long ago a time was, in the words of a notification list.
  const units = [['min', 'min', 60, 60], ['h', 'h', 3600, 24], ['day', 'days', 86400, 30], ['month', 'months', 2592000, 12], ['year', 'years', 31536000, Infinity]];
  function ago(iso) {
    const seconds = (Date.now() - Date.parse(iso)) / 1000;
    if (seconds < 45) return 'just now';
    for (const [one, many, size, below] of units) {
      const n = Math.max(1, Math.floor(seconds / size));
      if (n < below) return `${n} ${n === 1 ? one : many} ago`;
    }
  }
  const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeStyle: 'short' });
  setInterval(() => { for (const t of list.querySelectorAll('time')) t.textContent = ago(t.dateTime); }, 30000);

  // fill writes a message into its list item: read state, time, content, and its
  // call-to-action's buttons while pending or the pressed button's result once done.
  function fill(li, m) {
    const text = (m.content || []).map((b) => b.content).filter(Boolean).join(' ');
    Object.assign(li.dataset, { id: m._id, createdAt: m.createdAt, channel: m.channel, read: m.read, seen: m.seen, archived: m.archived });
    $('.title', li).textContent = m.title || m.subject || text.slice(0, 80) || '(no title)';
    const time = $('time', li);
    time.dateTime = m.createdAt;
    time.title = absolute.format(new Date(m.createdAt));
    time.textContent = ago(m.createdAt);
    const content = $('.content', li);
    content.textContent = text;
    content.hidden = !text || text === $('.title', li).textContent;
    const url = m.cta && m.cta.data && m.cta.data.url;
    $('.link', li).hidden = !url;
    if (url) Object.assign($('.link a', li), { href: url, textContent: url });
    $('[data-testid="toggle-read"]', li).textContent = m.read ? 'Mark unread' : 'Mark read';
    $('[data-testid="toggle-archived"]', li).textContent = m.archived ? 'Unarchive' : 'Archive';

    // Every message carries an action object; one without buttons or status has none.
    let action = m.cta && m.cta.action;
    if (action && !(action.buttons && action.buttons.length) && !action.status) action = null;
    $('.cta', li).hidden = !action;
    const buttons = $('.buttons', li);
    buttons.replaceChildren();
    const result = $('[data-testid="result"]', li);
    result.hidden = true;
    if (!action) {
      delete li.dataset.status;
      return;
    }
    const status = action.status || 'pending';
    li.dataset.status = status;
    if (status === 'done') {
      const type = action.result && action.result.type;
      const pressed = (action.buttons || []).find((b) => b.type === type);
      result.textContent = (pressed && (pressed.resultContent || pressed.content)) || 'Done';
      result.hidden = false;
      return;
    }
    for (const b of action.buttons || []) {
      const button = document.createElement('button');
      button.type = 'button';
      if (b.type === 'primary') button.className = 'primary';
      button.dataset.testid = `action-${b.type}`;
      button.textContent = b.content || b.type;
      button.addEventListener('click', () => press(li, b.type));
      buttons.append(button);
    }
  }

  // before tells whether message a comes before the listed item b: newest createdAt
  // first, then the larger _id, as the server orders them.
  const before = (a, b) => a.createdAt > b.dataset.createdAt || (a.createdAt === b.dataset.createdAt && a._id > b.dataset.id);

  // upsert shows a message as it is now: in place when listed (or removed when it left
  // the tab), in its place by date when new to the list and within the pages loaded.
  function upsert(m, fresh) {
    let li = rows.get(m._id);
    if (!tabs[tab].keeps(m, Boolean(li))) {
      if (li) remove(m._id);
      return;
    }
    if (!li) {
      const next = [...list.children].find((item) => before(m, item));
      if (!next && page.hasNextPage) return; // it comes with a later page
      li = rowTemplate.content.firstElementChild.cloneNode(true);
      rows.set(m._id, li);
      list.insertBefore(li, next || null);
      if (fresh) li.classList.add('fresh');
      seenWatcher.observe(li);
    }
    fill(li, m);
    showEmpty();
  }

  function remove(id) {
    const li = rows.get(id);
    if (!li) return;
    seenWatcher.unobserve(li);
    li.remove();
    rows.delete(id);
    showEmpty();
  }

  function showEmpty() {
    empty.textContent = tabs[tab].empty;
    empty.hidden = rows.size > 0;
  }

  // mark sets read, seen or archived on some messages and shows them as they are now.
  async function mark(ids, state) {
    const data = await graphql(markMutation, { s: subscriberId, ids, ...state });
    for (const m of data.markMessages) upsert(m, false);
  }

  // reading is the change that reads a listed message: seen too when it was not, so an
  // earlier first sight is never stamped again.
  const reading = (li) => (li.dataset.seen === 'false' ? { read: true, seen: true } : { read: true });

  function act(fn) {
    return (...args) => fn(...args).catch(showError);
  }

  // A message is seen once it is on screen: those shown within half a second are marked
  // in one request.
  const seenQueue = new Set();
  let seenTimer = 0;
  const seenWatcher = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      seenWatcher.unobserve(e.target);
      if (e.target.dataset.seen === 'false') seenQueue.add(e.target.dataset.id);
    }
    if (seenQueue.size && !seenTimer) {
      seenTimer = setTimeout(act(async () => {
        const ids = [...seenQueue].slice(0, 100);
        for (const id of ids) seenQueue.delete(id);
        seenTimer = 0;
        await mark(ids, { seen: true });
      }), 500);
    }
  });

  // Opening a message shows all of it and reads it.
  list.addEventListener('click', act(async (event) => {
    const button = event.target.closest('button');
    const li = button && button.closest('[data-testid="message"]');
    if (!li) return;
    const id = li.dataset.id;
    if (button.matches('.open')) {
      const open = li.dataset.open !== 'true';
      li.dataset.open = open;
      button.setAttribute('aria-expanded', String(open));
      if (open && li.dataset.read === 'false') await mark([id], reading(li));
    } else if (button.dataset.testid === 'toggle-read') {
      await mark([id], { read: li.dataset.read !== 'true' });
    } else if (button.dataset.testid === 'toggle-archived') {
      await mark([id], { archived: li.dataset.archived !== 'true' });
    }
  }));

  async function press(li, type) {
    for (const b of li.querySelectorAll('.buttons button')) b.disabled = true;
    try {
      const data = await graphql(pressMutation, { s: subscriberId, id: li.dataset.id, type, ...reading(li) });
      for (const m of data.markMessages) upsert(m, false); // the event brings the same to every other tab
    } catch (err) {
      showError(err);
      for (const b of li.querySelectorAll('.buttons button')) b.disabled = false;
    }
  }

  markAll.addEventListener('click', async () => {
    markAll.disabled = true; // until the badge says there is something unread again
    try {
      await graphql(markAllMutation, { s: subscriberId });
    } catch (err) {
      markAll.disabled = false;
      return showError(err);
    }
    // The events bring each message's new state; show it here at once.
    for (const li of rows.values()) li.dataset.read = 'true';
    for (const b of list.querySelectorAll('[data-testid="toggle-read"]')) b.textContent = 'Mark unread';
  });

  function setBadge(unread) {
    badge.dataset.count = unread;
    badge.textContent = String(unread); // exact, never capped
    badge.setAttribute('aria-label', `${unread} unread ${unread === 1 ? 'message' : 'messages'}`);
    markAll.disabled = unread === 0;
    document.title = `${unread ? `(${unread}) ` : ''}${subscriberId} · ${pageTitle}`;
  }

  // load lists the first page of the tab, or with append the page after the listed ones;
  // events that come meanwhile are applied after it.
  async function load(append) {
    const mine = append ? view : ++view;
    pending = pending || [];
    list.setAttribute('aria-busy', 'true');
    more.disabled = true;
    try {
      const data = await graphql(listQuery, {
        s: subscriberId, first: config.limit, after: append ? page.endCursor : undefined, ...tabs[tab].filter,
      });
      if (mine !== view) return;
      const { edges, pageInfo } = data.messagesConnection;
      if (!append) {
        for (const id of [...rows.keys()]) remove(id);
      }
      page = { hasNextPage: false, endCursor: null }; // every message of the answer is placed
      for (const e of edges) upsert(e.node, false);
      page = pageInfo;
      errorBox.hidden = true;
    } catch (err) {
      showError(err);
    } finally {
      if (mine === view) {
        const queued = pending;
        pending = null;
        for (const e of queued) upsert(e.message, e.kind === 'created');
        showEmpty();
        more.hidden = !page.hasNextPage;
        more.disabled = false;
        list.setAttribute('aria-busy', 'false');
        list.dataset.loaded = 'true';
      }
    }
  }
  more.addEventListener('click', () => load(true));

  // Tabs as the WAI-ARIA pattern has them: one tab stop; arrow keys, Home and End move
  // between tabs.
  function select(name, focus) {
    tab = name;
    for (const b of tabButtons) {
      const on = b.dataset.tab === name;
      b.setAttribute('aria-selected', String(on));
      b.tabIndex = on ? 0 : -1;
      if (on) {
        panel.setAttribute('aria-labelledby', b.id);
        if (focus) b.focus();
      }
    }
    list.dataset.loaded = 'false';
    load(false);
  }
  for (const [i, b] of tabButtons.entries()) {
    b.addEventListener('click', () => select(b.dataset.tab, false));
    b.addEventListener('keydown', (event) => {
      const n = tabButtons.length;
      const to = { ArrowRight: (i + 1) % n, ArrowLeft: (i + n - 1) % n, Home: 0, End: n - 1 }[event.key];
      if (to === undefined) return;
      event.preventDefault();
      select(tabButtons[to].dataset.tab, true);
    });
  }

  const picker = document.getElementById('subscriber');
  if (subscriberId && ![...picker.options].some((o) => o.value === subscriberId)) picker.add(new Option(subscriberId));
  picker.value = subscriberId;
  document.title = `${subscriberId} · ${pageTitle}`;
  if (!subscriberId) {
    setConnection('closed', 'No subscriber');
    showError('Name a subscriber: /inbox?subscriberId=...');
    return;
  }

  const ws = new URL(config.endpoint, location.href);
  ws.protocol = ws.protocol === 'https:' ? 'wss:' : 'ws:';
  const client = graphqlWs.createClient({
    url: ws.href,
    connectionParams: async () => ({ Authorization: `Bearer ${await token()}` }),
    retryAttempts: Infinity,
    shouldRetry: () => true,
    // The server does not ping: the client does, so proxies keep the socket open.
    keepAlive: 20000,
    on: {
      connecting: () => setConnection('connecting', 'Connecting…'),
      // After every (re)connection: a query on the same socket comes back after the
      // server has registered the subscriptions sent before it, so the list loaded then
      // misses no change; events meanwhile wait in pending.
      connected: () => {
        pending = pending || [];
        client.subscribe({ query: '{ __typename }' }, {
          next: () => {},
          error: (err) => showError(err instanceof Error ? err : describe([].concat(err))),
          complete: () => {
            setConnection('connected', 'Live');
            load(false);
          },
        });
      },
      closed: () => setConnection('closed', 'Disconnected: reconnecting…'),
    },
  });
  const stopped = (err) => {
    setConnection('error', 'Stopped');
    showError(err instanceof Error ? err : Array.isArray(err) ? describe(err) : `The live updates closed (${(err && err.code) || 'error'} ${(err && err.reason) || ''})`);
  };
  client.subscribe({ query: eventsQuery, variables: { s: subscriberId } }, {
    next: (result) => {
      if (result.errors && result.errors.length) return showError(describe(result.errors));
      const e = result.data.messageEvents;
      if (pending) pending.push(e);
      else upsert(e.message, e.kind === 'created');
    },
    error: stopped,
    complete: () => setConnection('closed', 'Stopped'),
  });
  client.subscribe({ query: countsQuery, variables: { s: subscriberId } }, {
    next: (result) => {
      if (result.errors && result.errors.length) return showError(describe(result.errors));
      setBadge(result.data.messageCounts.unread);
    },
    error: stopped,
    complete: () => {},
  });
})();
