package verify

import (
	"crypto/sha256"
	"encoding/hex"
)

// QueryHash is what a request record keeps of a URL's query string (the
// part after '?', as sent): the first 16 bytes of its SHA-256 in hex, or ""
// when there is none. Records and claims are compared by it, so a record
// never holds what a submitter typed into a query string. A hash of a short
// guessable value can be confirmed by guessing; records are therefore kept
// briefly and shown only to this instance's operator.
func QueryHash(rawQuery string) string {
	if rawQuery == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(rawQuery))
	return hex.EncodeToString(sum[:16])
}
