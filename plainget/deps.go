// Package plainget is the plain lane: one HTTP GET without JavaScript.
package plainget

import (
	_ "github.com/andybalholm/brotli"
	_ "golang.org/x/net/html/charset"
	_ "golang.org/x/text/encoding"
)
