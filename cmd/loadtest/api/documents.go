package api

// MessageFields is what the GraphQL benchmarks select of each message: an inbox row with
// its call-to-action, subscriber and template.
const MessageFields = `fragment Row on Message {
  _id createdAt channel transactionId subject title read seen status
  content { type content url }
  cta { type data { url } action { status buttons { type content } result { type payload } } }
  payload
  subscriber { _id subscriberId firstName lastName email }
  template { _id name }
}`

const (
	// FirstPageQuery is the first page of messages without totalCount.
	FirstPageQuery = `query FirstPage($limit: Int) {
  messages(limit: $limit) { hasMore page pageSize data { ...Row } }
}
` + MessageFields
	// FirstPageCountQuery is the first page of messages with totalCount.
	FirstPageCountQuery = `query FirstPageCount($limit: Int) {
  messages(limit: $limit) { totalCount hasMore page pageSize data { ...Row } }
}
` + MessageFields
	// CursorPageQuery is the page of messagesConnection after a cursor.
	CursorPageQuery = `query CursorPage($first: Int, $after: String) {
  messagesConnection(first: $first, after: $after) {
    edges { cursor node { ...Row } }
    pageInfo { hasNextPage endCursor }
  }
}
` + MessageFields
	// InboxCountsQuery is a subscriber's inbox badge and tabs, from the counters.
	InboxCountsQuery = `query InboxCounts($subscriberId: String) {
  messageCounts(subscriberId: $subscriberId, channel: in_app) { total unread unseen archived }
}`
	// EnvironmentCountsQuery counts the whole environment's messages by state.
	EnvironmentCountsQuery = `query EnvironmentCounts {
  messageCounts { total unread unseen archived snoozed }
}`
	// UnreadPageQuery is a subscriber's unread tab: in-app, not read, not archived.
	UnreadPageQuery = `query UnreadPage($subscriberId: String, $limit: Int) {
  messages(subscriberId: $subscriberId, channel: in_app, read: false, archived: false, limit: $limit) { hasMore data { ...Row } }
}
` + MessageFields
	// cursorWalkQuery finds a deep cursor: page info only, nothing of the rows.
	cursorWalkQuery = `query CursorWalk($first: Int, $after: String) {
  messagesConnection(first: $first, after: $after) { pageInfo { hasNextPage endCursor } }
}`
)
