package models

// Keyset is a message's position in the orders by createdAt, then id: in the list order
// (both descending) it is the last message a page showed, and the next page starts
// strictly after it; MessagesOldestFirst walks the same keys ascending.
type Keyset struct {
	CreatedAt Time
	ID        string
}

// KeysetOf is the position of m in the list order.
func KeysetOf(m *Message) Keyset { return Keyset{CreatedAt: m.CreatedAt, ID: m.ID} }

// MessageEdge is one message of a connection and the cursor that resumes after it.
type MessageEdge struct {
	Cursor string   `json:"cursor"`
	Node   *Message `json:"node"`
}

// MessagesConnectionPage is what MessagesAfter found: the messages of one page in list
// order, whether more follow, and the total when asked for.
type MessagesConnectionPage struct {
	Messages    []*Message
	HasNextPage bool
	TotalCount  int
}
