// The live inbox: one subscriber's newest messages, listed with a GraphQL query and kept
// up to date by the messageEvents subscription (graphql-ws, the global graphqlWs). The
// page holds no API key: it asks the server's development helper for a session token
// scoped to the subscriber, and sends it as a Bearer token with every request and in the
// WebSocket's connection_init.
(function () {
  'use strict';
  const config = JSON.parse(document.getElementById('inbox-config').textContent);
  const subscriberId = new URLSearchParams(location.search).get('subscriberId') || config.subscribers[0] || '';

  const list = document.querySelector('[data-testid="messages"]');
  const empty = document.querySelector('[data-testid="empty"]');
  const errorBox = document.querySelector('[data-testid="error"]');
  const connection = document.querySelector('[data-testid="connection"]');
  const rowTemplate = document.getElementById('message-row');

  const fields = `_id createdAt channel title subject content { type content }
    cta { type action { status buttons { type content resultContent } result { type } } }`;
  const listQuery = `query Inbox($s: String!, $limit: Int!) {
    messages(subscriberId: $s, limit: $limit) { data { ${fields} } } }`;
  const eventsQuery = `subscription InboxEvents($s: String!) {
    messageEvents(subscriberId: $s) { kind cursor message { ${fields} } } }`;
  const markMutation = `mutation Press($s: String!, $id: ID!, $type: ButtonType!) {
    markMessageAction(subscriberId: $s, messageId: $id, type: $type, status: done) { ${fields} } }`;

  /** rows maps a message's _id to its list item. */
  const rows = new Map();
  /** pending holds the events that arrive while the list loads, applied after it. */
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

  // fill writes a message into its list item; the buttons show only while the action is
  // pending.
  function fill(li, m) {
    const text = (m.content || []).map((b) => b.content).filter(Boolean).join(' ');
    li.dataset.id = m._id;
    li.querySelector('.title').textContent = m.title || m.subject || text.slice(0, 80) || '(no title)';
    li.querySelector('.channel').textContent = m.channel;
    const time = li.querySelector('time');
    time.dateTime = m.createdAt;
    time.textContent = new Date(m.createdAt).toLocaleString();
    const content = li.querySelector('.content');
    content.textContent = text;
    content.hidden = !text || text === li.querySelector('.title').textContent;

    // Every message carries an action object; one without buttons or status has none.
    let action = m.cta && m.cta.action;
    if (action && !(action.buttons && action.buttons.length) && !action.status) action = null;
    const cta = li.querySelector('.cta');
    const buttons = li.querySelector('.buttons');
    buttons.replaceChildren();
    cta.hidden = !action;
    if (!action) {
      delete li.dataset.status;
      return;
    }
    const status = action.status || 'pending';
    li.dataset.status = status;
    const pressed = action.result && action.result.type;
    const strong = li.querySelector('[data-testid="status"]');
    strong.textContent = status;
    strong.title = pressed ? `${pressed} button pressed` : '';
    if (status !== 'pending') return;
    for (const b of action.buttons || []) {
      const button = document.createElement('button');
      button.type = 'button';
      button.dataset.type = b.type;
      button.dataset.testid = `action-${b.type}`;
      button.textContent = b.content || b.type;
      button.addEventListener('click', () => press(li, m._id, b.type));
      buttons.append(button);
    }
  }

  // upsert puts a message into the list by _id: in place when listed, at the top when new.
  function upsert(m, fresh) {
    let li = rows.get(m._id);
    if (!li) {
      li = rowTemplate.content.firstElementChild.cloneNode(true);
      rows.set(m._id, li);
      list.prepend(li);
      if (fresh) li.classList.add('fresh');
    }
    fill(li, m);
    empty.hidden = rows.size > 0;
  }

  async function press(li, id, type) {
    for (const b of li.querySelectorAll('.buttons button')) b.disabled = true;
    try {
      const data = await graphql(markMutation, { s: subscriberId, id, type });
      upsert(data.markMessageAction, false); // the event brings the same to every other tab
    } catch (err) {
      showError(err);
      for (const b of li.querySelectorAll('.buttons button')) b.disabled = false;
    }
  }

  // load lists the newest messages, then applies the events that came meanwhile.
  async function load() {
    pending = pending || [];
    list.setAttribute('aria-busy', 'true');
    try {
      const data = await graphql(listQuery, { s: subscriberId, limit: config.limit });
      rows.clear();
      list.replaceChildren();
      for (const m of data.messages.data.slice().reverse()) upsert(m, false);
      empty.hidden = rows.size > 0;
      errorBox.hidden = true;
    } catch (err) {
      showError(err);
    } finally {
      const queued = pending;
      pending = null;
      for (const e of queued) upsert(e.message, e.kind === 'created');
      list.setAttribute('aria-busy', 'false');
      list.dataset.loaded = 'true';
    }
  }

  const picker = document.getElementById('subscriber');
  if (subscriberId && ![...picker.options].some((o) => o.value === subscriberId)) picker.add(new Option(subscriberId));
  picker.value = subscriberId;
  document.title = `${subscriberId} · ${document.title}`;
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
      // server has registered the subscription sent before it, so the list loaded then
      // misses no change; events meanwhile wait in pending.
      connected: () => {
        pending = pending || [];
        client.subscribe({ query: '{ __typename }' }, {
          next: () => {},
          error: (err) => showError(err instanceof Error ? err : describe([].concat(err))),
          complete: () => {
            setConnection('connected', 'Live');
            load();
          },
        });
      },
      closed: () => setConnection('closed', 'Disconnected: reconnecting…'),
    },
  });
  client.subscribe({ query: eventsQuery, variables: { s: subscriberId } }, {
    next: (result) => {
      if (result.errors && result.errors.length) return showError(describe(result.errors));
      const e = result.data.messageEvents;
      if (pending) pending.push(e);
      else upsert(e.message, e.kind === 'created');
    },
    error: (err) => {
      setConnection('error', 'Stopped');
      showError(err instanceof Error ? err : Array.isArray(err) ? describe(err) : `The event stream closed (${(err && err.code) || 'error'} ${(err && err.reason) || ''})`);
    },
    complete: () => setConnection('closed', 'Stopped'),
  });
})();
