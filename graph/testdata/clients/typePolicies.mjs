// The Apollo Client cache policies for this server's schema, for frontends to copy.
//
// Message, Subscriber and Template are identified by _id, whether or not a query also
// selects id. The call-to-action objects have no identity of their own: by default the
// cache replaces such an object whole whenever a field of its type is written again, so
// markMessageAction answering only cta { action { status result { type } } } wipes what
// the inbox query fetched. merge: true merges the new fields into the old object; each
// level needs its own: MessageCTA keeps type and data, MessageAction keeps buttons,
// MessageActionResult keeps payload.

/** typePolicies is the InMemoryCache configuration: new InMemoryCache({ typePolicies }). */
export const typePolicies = {
  Message: { keyFields: ['_id'] },
  Subscriber: { keyFields: ['_id'] },
  Template: { keyFields: ['_id'] },
  MessageCTA: { merge: true },
  MessageAction: { merge: true },
  MessageActionResult: { merge: true },
};
