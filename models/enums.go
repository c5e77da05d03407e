package models

import (
	"fmt"
	"io"

	"github.com/99designs/gqlgen/graphql"
)

// ChannelType is the channel a message was delivered through.
type ChannelType string

// The five delivery channels, in their wire spelling.
const (
	ChannelInApp ChannelType = "in_app"
	ChannelEmail ChannelType = "email"
	ChannelSMS   ChannelType = "sms"
	ChannelChat  ChannelType = "chat"
	ChannelPush  ChannelType = "push"
)

// Channels lists every channel, in the order the document gives them.
var Channels = []ChannelType{ChannelInApp, ChannelEmail, ChannelSMS, ChannelChat, ChannelPush}

// Valid reports whether c is one of the five channels.
func (c ChannelType) Valid() bool {
	switch c {
	case ChannelInApp, ChannelEmail, ChannelSMS, ChannelChat, ChannelPush:
		return true
	}
	return false
}

// ButtonType names a call-to-action button, and so the kind of action taken.
type ButtonType string

// The two button types.
const (
	ButtonPrimary   ButtonType = "primary"
	ButtonSecondary ButtonType = "secondary"
)

// Valid reports whether b is primary or secondary.
func (b ButtonType) Valid() bool { return b == ButtonPrimary || b == ButtonSecondary }

// MessageActionStatus is the state of a message's call-to-action.
type MessageActionStatus string

// The two action states.
const (
	ActionPending MessageActionStatus = "pending"
	ActionDone    MessageActionStatus = "done"
)

// Valid reports whether s is pending or done.
func (s MessageActionStatus) Valid() bool { return s == ActionPending || s == ActionDone }

// enumString is the GraphQL marshalling shared by the string enums.
type enumString interface {
	~string
	Valid() bool
}

// marshalEnum writes v as GraphQL writes a String. A stored value is not always a valid
// one (another writer's row), and strconv.Quote, which gqlgen's generated enums use,
// writes such a value as Go syntax ("\x01"), which is not JSON.
func marshalEnum[T enumString](w io.Writer, v T) { graphql.MarshalString(string(v)).MarshalGQL(w) }

func unmarshalEnum[T enumString](dst *T, v any, name string) error {
	s, ok := v.(string)
	if !ok || !T(s).Valid() {
		return fmt.Errorf("%v is not a valid %s", v, name)
	}
	*dst = T(s)
	return nil
}

// MarshalGQL writes the enum value.
func (c ChannelType) MarshalGQL(w io.Writer) { marshalEnum(w, c) }

// UnmarshalGQL reads the enum value.
func (c *ChannelType) UnmarshalGQL(v any) error { return unmarshalEnum(c, v, "ChannelType") }

// MarshalGQL writes the enum value.
func (b ButtonType) MarshalGQL(w io.Writer) { marshalEnum(w, b) }

// UnmarshalGQL reads the enum value.
func (b *ButtonType) UnmarshalGQL(v any) error { return unmarshalEnum(b, v, "ButtonType") }

// MarshalGQL writes the enum value.
func (s MessageActionStatus) MarshalGQL(w io.Writer) { marshalEnum(w, s) }

// UnmarshalGQL reads the enum value.
func (s *MessageActionStatus) UnmarshalGQL(v any) error {
	return unmarshalEnum(s, v, "MessageActionStatus")
}
