package peer

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"messages/cmd/loadtest/api"
)

// The query shapes of `loadtest peer`: each the same read or write, written once for this
// server's schema and once for PostGraphile's schema of the same tables (.ci/peer), with
// the same selection: an inbox row with its subscriber and template.

// peerTarget is what the shapes need to know of every side, found at start.
type peerTarget struct {
	serverURL, apiKey string        // this server, its /graphql and the environment's API key
	peers             []*peerEngine // the peers, in the order of the flags
	token             string        // the signed JWT of the RLS peers' requests
	environmentID     string
	subscriber        string // the busy subscriber's external id (the server's subscriberId)
	subscriberKey     string // its row id (messages.subscriber_id, the peer's subscriberId)
	pageSize, depth   int
	// markIDs are messages of the subscriber, the targets of the mark shape.
	markIDs []string
	// serverCursor points after the row at depth on the server.
	serverCursor string
}

// peerEngine is one peer: a PostGraphile release, its endpoints (plain, and with JWT +
// row-level security when rlsURL is set), its queries in its schema's names, and its
// cursor at depth.
type peerEngine struct {
	side, label string // the samples' side ("pg4", "pg5") and the table's name of it
	url, rlsURL string
	q           peerQueries
	cursor      string
}

// peerShapeSide builds the i-th request of a shape on a peer.
type peerShapeSide func(t *peerTarget, p *peerEngine, i int64) gqlCall

// gqlCall is one GraphQL POST: the endpoint, its extra headers, document and variables.
type gqlCall struct {
	url    string
	header http.Header
	query  string
	vars   map[string]any
}

// shapeSide builds the i-th request of a shape on this server.
type shapeSide func(t *peerTarget, i int64) gqlCall

// peerShape is one row of the table: the same thing asked of both sides. A shape
// without a server side reuses the server figures of serverAs.
type peerShape struct {
	name, about string
	server      shapeSide
	peer        peerShapeSide
	serverAs    string
}

// peerShapes are the rows of the table, in the order they run.
var peerShapes = []peerShape{
	{name: "inbox", about: "a subscriber's first page", server: serverInbox, peer: peerInbox},
	{name: "inbox-rls", about: "same, the peer with JWT + row-level security", serverAs: "inbox", peer: peerInboxRLS},
	{name: "mark", about: "mark an action", server: serverMark, peer: peerMark},
	{name: "first-page-count", about: "first page + exact totalCount", server: serverFirstPageCount, peer: peerFirstPageCount},
	{name: "offset", about: "offset DEPTH", server: serverOffset, peer: peerOffset},
	{name: "cursor", about: "cursor DEPTH deep", server: serverCursor, peer: peerCursor},
}

func peerShapeNames() []string {
	out := make([]string, len(peerShapes))
	for i, s := range peerShapes {
		out[i] = s.name
	}
	return out
}

// The peers' queries are written once, with KEY for the field of a row's primary key and
// KEY_DESC and UPDATE_BY_KEY for what is named after it: PostGraphile 4 calls it id
// (ID_DESC, updateMessageById); PostGraphile 5's amber preset keeps every other name of
// version 4 for these tables, but id is its global node id there, the key being rowId
// (ROW_ID_DESC, updateMessageByRowId), as its introspection shows.

// peerKeys are the names of one release's schema that the queries' placeholders stand for.
type peerKeys struct{ key, keyDesc, updateByKey string }

var (
	postgraphile4Keys = peerKeys{key: "id", keyDesc: "ID_DESC", updateByKey: "updateMessageById"}
	postgraphile5Keys = peerKeys{key: "rowId", keyDesc: "ROW_ID_DESC", updateByKey: "updateMessageByRowId"}
)

// peerRowFields is the peer's selection of a message, field for field the server's Row
// (api.MessageFields): the mark columns stand for cta.action, which the server folds in.
const peerRowFields = `fragment Row on Message {
  KEY createdAt channel transactionId subject title read seen status
  content cta payload actionStatus actionResultType actionResultPayload
  subscriberBySubscriberId { KEY subscriberId firstName lastName email }
  templateByTemplateId { KEY name }
}`

// newestFirst is the server's list order, on the peer.
const newestFirst = `[CREATED_AT_DESC, KEY_DESC]`

const (
	serverInboxQuery = `query Inbox($subscriberId: String, $limit: Int) {
  messages(subscriberId: $subscriberId, limit: $limit) { hasMore page pageSize data { ...Row } }
}
` + api.MessageFields
	serverMarkQuery = `mutation Mark($subscriberId: String!, $messageId: ID!, $status: MessageActionStatus!, $payload: JSON) {
  markMessageAction(subscriberId: $subscriberId, messageId: $messageId, type: primary, status: $status, payload: $payload) { ...Row }
}
` + api.MessageFields
	serverOffsetQuery = `query Offset($page: Int, $limit: Int) {
  messages(page: $page, limit: $limit) { hasMore page pageSize data { ...Row } }
}
` + api.MessageFields

	peerInboxQuery = `query Inbox($environmentId: String, $subscriberId: String, $first: Int) {
  allMessages(condition: {environmentId: $environmentId, subscriberId: $subscriberId}, orderBy: ` + newestFirst + `, first: $first) {
    pageInfo { hasNextPage } nodes { ...Row }
  }
}
` + peerRowFields
	// peerInboxRLSQuery leaves the subscriber to the policy, as a frontend holding a
	// subscriber's token would.
	peerInboxRLSQuery = `query InboxRLS($environmentId: String, $first: Int) {
  allMessages(condition: {environmentId: $environmentId}, orderBy: ` + newestFirst + `, first: $first) {
    pageInfo { hasNextPage } nodes { ...Row }
  }
}
` + peerRowFields
	peerMarkQuery = `mutation Mark($id: String!, $status: String!, $payload: JSON) {
  UPDATE_BY_KEY(input: {KEY: $id, messagePatch: {actionStatus: $status, actionResultType: "primary", actionResultPayload: $payload}}) {
    message { ...Row }
  }
}
` + peerRowFields
	peerFirstPageCountQuery = `query FirstPageCount($environmentId: String, $first: Int) {
  allMessages(condition: {environmentId: $environmentId}, orderBy: ` + newestFirst + `, first: $first) {
    totalCount pageInfo { hasNextPage } nodes { ...Row }
  }
}
` + peerRowFields
	peerOffsetQuery = `query Offset($environmentId: String, $first: Int, $offset: Int) {
  allMessages(condition: {environmentId: $environmentId}, orderBy: ` + newestFirst + `, first: $first, offset: $offset) {
    pageInfo { hasNextPage } nodes { ...Row }
  }
}
` + peerRowFields
	peerCursorQuery = `query CursorPage($environmentId: String, $first: Int, $after: Cursor) {
  allMessages(condition: {environmentId: $environmentId}, orderBy: ` + newestFirst + `, first: $first, after: $after) {
    edges { cursor node { ...Row } } pageInfo { hasNextPage endCursor }
  }
}
` + peerRowFields
	// peerCursorAtQuery reads the cursor of the row at a depth, by offset, once at start.
	peerCursorAtQuery = `query CursorAt($environmentId: String, $offset: Int) {
  allMessages(condition: {environmentId: $environmentId}, orderBy: ` + newestFirst + `, first: 1, offset: $offset) {
    edges { cursor }
  }
}`
	// peerMarkTargetsQuery reads the subscriber's newest messages, once at start.
	peerMarkTargetsQuery = `query MarkTargets($environmentId: String, $subscriberId: String) {
  allMessages(condition: {environmentId: $environmentId, subscriberId: $subscriberId}, orderBy: ` + newestFirst + `, first: 100) {
    nodes { KEY }
  }
}`
	// peerTotalQuery counts what a caller may see, to check the policy at start.
	peerTotalQuery = `query Total($subscriberId: String) { allMessages(condition: {subscriberId: $subscriberId}) { totalCount } }`
)

func (t *peerTarget) server(query string, vars map[string]any) gqlCall {
	return gqlCall{url: t.serverURL + "/graphql", header: http.Header{"Authorization": {"ApiKey " + t.apiKey}}, query: query, vars: vars}
}

// peerQueries are the peer queries in one release's names.
type peerQueries struct {
	key                                           string // the field of a row's key
	inbox, inboxRLS, mark, firstPageCount, offset string
	cursor, cursorAt, markTargets, total          string
}

func newPeerQueries(k peerKeys) peerQueries {
	r := strings.NewReplacer("UPDATE_BY_KEY", k.updateByKey, "KEY_DESC", k.keyDesc, "KEY", k.key)
	return peerQueries{key: k.key,
		inbox: r.Replace(peerInboxQuery), inboxRLS: r.Replace(peerInboxRLSQuery), mark: r.Replace(peerMarkQuery),
		firstPageCount: r.Replace(peerFirstPageCountQuery), offset: r.Replace(peerOffsetQuery), cursor: r.Replace(peerCursorQuery),
		cursorAt: r.Replace(peerCursorAtQuery), markTargets: r.Replace(peerMarkTargetsQuery), total: r.Replace(peerTotalQuery)}
}

// newPeerEngine is a peer at url (and rlsURL, "" for none) with the names of keys.
func newPeerEngine(side, label, url, rlsURL string, keys peerKeys) *peerEngine {
	return &peerEngine{side: side, label: label, url: url, rlsURL: rlsURL, q: newPeerQueries(keys)}
}

func (p *peerEngine) call(query string, vars map[string]any) gqlCall {
	return gqlCall{url: p.url, query: query, vars: vars}
}

// rlsCall is a call to the RLS endpoint with the subscriber's token.
func (p *peerEngine) rlsCall(t *peerTarget, query string, vars map[string]any) gqlCall {
	return gqlCall{url: p.rlsURL, header: http.Header{"Authorization": {"Bearer " + t.token}}, query: query, vars: vars}
}

func serverInbox(t *peerTarget, _ int64) gqlCall {
	return t.server(serverInboxQuery, map[string]any{"subscriberId": t.subscriber, "limit": t.pageSize})
}

func peerInbox(t *peerTarget, p *peerEngine, _ int64) gqlCall {
	return p.call(p.q.inbox, map[string]any{"environmentId": t.environmentID, "subscriberId": t.subscriberKey, "first": t.pageSize})
}

func peerInboxRLS(t *peerTarget, p *peerEngine, _ int64) gqlCall {
	return p.rlsCall(t, p.q.inboxRLS, map[string]any{"environmentId": t.environmentID, "first": t.pageSize})
}

// markTarget is the i-th mark's message and status: the subscriber's messages in a
// scattered order, done and pending in turn, as the mark-action scenario does.
func (t *peerTarget) markTarget(i int64) (id, status string, payload map[string]any) {
	id = t.markIDs[int(uint64(i*2654435761)%uint64(len(t.markIDs)))]
	status = "done"
	if i%2 == 1 {
		status = "pending"
	}
	return id, status, map[string]any{"loadtest": i}
}

func serverMark(t *peerTarget, i int64) gqlCall {
	id, status, payload := t.markTarget(i)
	return t.server(serverMarkQuery, map[string]any{"subscriberId": t.subscriber, "messageId": id, "status": status, "payload": payload})
}

func peerMark(t *peerTarget, p *peerEngine, i int64) gqlCall {
	id, status, payload := t.markTarget(i)
	return p.call(p.q.mark, map[string]any{"id": id, "status": status, "payload": payload})
}

func serverFirstPageCount(t *peerTarget, _ int64) gqlCall {
	return t.server(api.FirstPageCountQuery, map[string]any{"limit": t.pageSize})
}

func peerFirstPageCount(t *peerTarget, p *peerEngine, _ int64) gqlCall {
	return p.call(p.q.firstPageCount, map[string]any{"environmentId": t.environmentID, "first": t.pageSize})
}

func serverOffset(t *peerTarget, _ int64) gqlCall {
	return t.server(serverOffsetQuery, map[string]any{"page": t.depth / t.pageSize, "limit": t.pageSize})
}

func peerOffset(t *peerTarget, p *peerEngine, _ int64) gqlCall {
	return p.call(p.q.offset, map[string]any{"environmentId": t.environmentID, "first": t.pageSize, "offset": t.depth / t.pageSize * t.pageSize})
}

func serverCursor(t *peerTarget, _ int64) gqlCall {
	return t.server(api.CursorPageQuery, map[string]any{"first": t.pageSize, "after": t.serverCursor})
}

func peerCursor(t *peerTarget, p *peerEngine, _ int64) gqlCall {
	return p.call(p.q.cursor, map[string]any{"environmentId": t.environmentID, "first": t.pageSize, "after": p.cursor})
}

// signJWT returns an HS256 JSON Web Token of claims, as PostGraphile's --jwt-secret
// verifies it.
func signJWT(secret string, claims map[string]any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	unsigned := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(payload)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(unsigned))
	return unsigned + "." + enc.EncodeToString(mac.Sum(nil)), nil
}

// subscriberToken is the RLS peer's token for a subscriber's row id: the role requests
// run as, the claim the policy reads, PostGraphile's default audience, a day's expiry.
func subscriberToken(secret, role, subscriberKey string, now time.Time) (string, error) {
	if secret == "" {
		return "", fmt.Errorf("no JWT secret")
	}
	return signJWT(secret, map[string]any{
		"role": role, "subscriber_id": subscriberKey, "aud": "postgraphile",
		"iat": now.Unix(), "exp": now.Add(24 * time.Hour).Unix(),
	})
}

// peer is the peer whose samples are side.
func (t *peerTarget) peer(side string) *peerEngine {
	for _, p := range t.peers {
		if p.side == side {
			return p
		}
	}
	panic("unknown peer " + side)
}

func peerShapeByName(name string) peerShape {
	for _, s := range peerShapes {
		if s.name == name {
			return s
		}
	}
	panic("unknown shape " + name)
}
