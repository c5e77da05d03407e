// The Apollo Client cache policies for this server's schema, for frontends to copy.
//
// Message, Subscriber and Template are identified by _id. Every other object type has no
// identity of its own: it lives inside the entity that holds it, and by default the cache
// replaces such an object whole whenever a field of that type is written again, so a
// mutation that selects less of it (markMessageAction answering only cta.action.status)
// wipes what an earlier query fetched (the buttons). merge: true merges the new fields
// into the old object instead.

/** typePolicies is the InMemoryCache configuration: new InMemoryCache({ typePolicies }). */
export const typePolicies = {
  Message: { keyFields: ['_id'] },
  Subscriber: { keyFields: ['_id'] },
  Template: { keyFields: ['_id'] },
  MessageCTA: { merge: true },
  MessageCTAData: { merge: true },
  MessageAction: { merge: true },
  MessageActionResult: { merge: true },
};
