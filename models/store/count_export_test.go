package store

// CountMessages exposes countMessages to the external tests, which compare it with a
// COUNT over the messages themselves for every filter shape, without going through a
// page (a page that reaches the end of its list derives its count without asking).
var CountMessages = (*Store).countMessages
