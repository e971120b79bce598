// Package plainget is the plain lane: one HTTP GET of the page with no
// JavaScript, no cookies and no stored session, as an AI crawler makes it.
// It follows up to five redirects itself, asking a callback before each hop,
// decodes gzip, deflate and br, caps the decoded body and converts the
// document's charset to UTF-8.
package plainget
