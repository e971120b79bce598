package compare

import (
	"unicode"
	"unicode/utf8"
)

// wordCounter counts visible words and, for the text share, how often each
// lower-case word occurs (by a 64-bit FNV-1a hash, so no word is copied).
//
// A word is a run of non-space characters with at least one letter or digit,
// its leading and trailing punctuation ignored for the share. Han, Hiragana
// and Katakana characters, which are written without spaces, count one word
// each. The work is one pass over the bytes.
type wordCounter struct {
	total int
	keys  map[uint64]uint32
	// full is set when keys reached maxWordKeys; words not yet seen are then
	// counted in total but not kept for the share.
	full bool
	// countOnly: count words without keeping their hashes.
	countOnly bool
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// add counts the words of one text node.
func (w *wordCounter) add(s string) {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '\v' {
				if start >= 0 {
					w.token(s[start:i])
					start = -1
				}
			} else if start < 0 {
				start = i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				w.token(s[start:i])
				start = -1
			}
		case isIdeograph(r):
			if start >= 0 {
				w.token(s[start:i])
				start = -1
			}
			w.token(s[i : i+size])
		default:
			if start < 0 {
				start = i
			}
		}
		i += size
	}
	if start >= 0 {
		w.token(s[start:])
	}
}

// isIdeograph reports whether r belongs to a script written without spaces
// between words.
func isIdeograph(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// token counts one space-free token if it holds a letter or digit.
func (w *wordCounter) token(t string) {
	// Trim leading and trailing runes that are neither letters nor digits.
	lo, hi := 0, len(t)
	for lo < hi {
		r, size := utf8.DecodeRuneInString(t[lo:])
		if isWordRune(r) {
			break
		}
		lo += size
	}
	for hi > lo {
		r, size := utf8.DecodeLastRuneInString(t[lo:hi])
		if isWordRune(r) {
			break
		}
		hi -= size
	}
	if lo == hi {
		return
	}
	w.total++
	if w.countOnly {
		return
	}
	h := hashLower(t[lo:hi])
	if w.keys == nil {
		w.keys = make(map[uint64]uint32)
	}
	if n, ok := w.keys[h]; ok {
		w.keys[h] = n + 1
		return
	}
	if len(w.keys) >= maxWordKeys {
		w.full = true
		return
	}
	w.keys[h] = 1
}

// isWordRune reports whether r is a letter or a digit.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// hashLower returns the FNV-1a hash of the lower-case UTF-8 form of s.
func hashLower(s string) uint64 {
	h := uint64(fnvOffset)
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			h = (h ^ uint64(c)) * fnvPrime
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n := utf8.EncodeRune(buf[:], unicode.ToLower(r))
		for _, b := range buf[:n] {
			h = (h ^ uint64(b)) * fnvPrime
		}
	}
	return h
}

// hashString returns the FNV-1a hash of s as it is.
func hashString(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}
