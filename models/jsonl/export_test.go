package jsonl

// ImportChunked is Import as it runs on a Galera node, for tests on any database.
var ImportChunked = importChunked
