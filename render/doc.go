// Package render is the render lane: one headless Chromium per process, a
// fresh browser context per audit, and a guarded forward proxy that every
// browser connection goes through. Render returns a compare.Snapshot of the
// settled DOM.
package render
