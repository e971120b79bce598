package plainget

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"golang.org/x/net/html/charset"

	"lekta.dev/lekta/compare"
)

// maxEncodings caps stacked Content-Encoding layers ("gzip, br").
const maxEncodings = 2

// sniffLen is how much of a body without a Content-Type is sniffed (the
// WHATWG MIME Sniffing standard reads at most 512 bytes).
const sniffLen = 512

// readBody reads the decoded body into snap, at most max bytes. Text bodies
// are converted to UTF-8; other media types are counted and dropped, since
// nothing in them can be extracted. A body without a Content-Type is sniffed
// as browsers do, so a PDF or an image sent without one is not read as HTML.
func readBody(resp *http.Response, max int64, snap *compare.Snapshot) error {
	r, err := decoded(resp)
	if err != nil {
		return err
	}
	if snap.ContentType == "" {
		br := bufio.NewReaderSize(r, sniffLen)
		head, _ := br.Peek(sniffLen) // a shorter body, or an error the reads below meet again
		if mt := mediaType(http.DetectContentType(head)); !isText(mt) {
			snap.ContentType = mt
		}
		r = br
	}
	if !isText(snap.ContentType) {
		n, err := io.Copy(io.Discard, io.LimitReader(r, max+1))
		snap.Bytes, snap.Truncated = min(n, max), n > max
		return err
	}
	body, err := io.ReadAll(io.LimitReader(r, max+1))
	if int64(len(body)) > max {
		body, snap.Truncated = body[:max], true
	}
	snap.Bytes = int64(len(body))
	snap.Body, snap.Charset = toUTF8(body, resp.Header.Get("Content-Type"))
	return err
}

// decoded wraps the body in a decoder for each Content-Encoding, last applied first.
func decoded(resp *http.Response) (io.Reader, error) {
	var codings []string
	for _, v := range resp.Header.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				codings = append(codings, c)
			}
		}
	}
	if len(codings) > maxEncodings {
		return nil, fmt.Errorf("%w: %d stacked encodings", ErrUnsupportedEncoding, len(codings))
	}
	var r io.Reader = resp.Body
	for i := len(codings) - 1; i >= 0; i-- {
		var err error
		if r, err = decoder(codings[i], r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func decoder(coding string, r io.Reader) (io.Reader, error) {
	switch coding {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	case "deflate":
		return inflate(r)
	case "br":
		return brotli.NewReader(r), nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnsupportedEncoding, coding)
}

// inflate reads HTTP "deflate", which is zlib-wrapped by the standard but
// raw deflate from some servers; the zlib header tells them apart.
func inflate(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(2)
	if len(head) == 2 && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
		zr, err := zlib.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("deflate: %w", err)
		}
		return zr, nil
	}
	return flate.NewReader(br), nil
}

// isText reports whether a media type holds a document worth decoding.
// An empty type is sniffed as text: many servers omit it for HTML.
func isText(mt string) bool {
	switch {
	case mt == "", strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+xml"), strings.HasSuffix(mt, "+json"),
		mt == "application/xml", mt == "application/json", mt == "application/javascript":
		return true
	}
	return false
}

// toUTF8 converts body to UTF-8 by its BOM, the Content-Type charset or a
// <meta> charset, in that order (the HTML standard's sniffing), and replaces
// whatever is still invalid.
func toUTF8(body []byte, contentType string) ([]byte, string) {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		out = body
	}
	out = bytes.TrimPrefix(out, []byte("\uFEFF"))
	if !utf8.Valid(out) {
		out = bytes.ToValidUTF8(out, []byte("\uFFFD"))
	}
	return out, name
}

// Decoded is the body of resp with its Content-Encoding layers (gzip,
// deflate, br; at most maxEncodings) undone, for other lanes that read
// bodies as the site sent them.
func Decoded(resp *http.Response) (io.Reader, error) { return decoded(resp) }
