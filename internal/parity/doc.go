// Package parity measures how Lekta's page checks and robots.txt answers
// agree with Lighthouse's SEO audits (document-title, http-status-code,
// is-crawlable, canonical, hreflang, meta-description, link-text,
// crawlable-anchors, robots-txt) on cases written from Lighthouse's unit
// tests, its SEO test pages and its audit source. Its test holds the cases
// and requires at least 95% agreement per audit, apart from the listed
// cases where Lekta answers otherwise on purpose (the table of docs/report.md says
// why). It has no code outside its tests.
package parity
