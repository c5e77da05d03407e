package changefeed

// HoldEvery exposes how many polls pass between reads of change_holds, so a test can
// wait until the feed has certainly read a hold it just registered.
const HoldEvery = holdEvery
