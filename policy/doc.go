// Package policy decides what LektaBot may fetch: target URL parsing and
// normalisation, the SSRF Guard every connection of both lanes is dialled
// through, robots.txt under RFC 9309 and as Google's parser reads it (the
// stricter answer holds), and the policy numbers the /bot page
// publishes. It imports no other project package.
package policy
