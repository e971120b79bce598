// Package verify answers a site operator's question "was this request in my
// log really LektaBot?" against the request records this instance keeps.
//
// It reads a log line (common or combined log format, optionally with a
// leading virtual host as Apache's vhost_combined writes it) or separate
// fields into a Claim, and matches the claim against the records of its
// host within a few seconds of its time: the method, the path, the query
// (compared by hash: records never hold query values), and the source
// address (the local address of our connection, or one of the public
// addresses the operator configured with --egress-addr). The Answer is yes
// or no, with the time, source and lane of the matching request and nothing
// else: never an audit id, a submitter, or another request.
//
// The package is pure: the records come through the Store interface, which
// package records implements; there is no I/O, clock or logging here.
package verify
