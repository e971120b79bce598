package cache

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sync"
)

// A stored report is a blob: one format byte, then the report, raw or gzip.
const (
	blobRaw  byte = 'r'
	blobGzip byte = 'z'
)

// compressAbove is the report size from which blobs are gzip-compressed.
const compressAbove = 1 << 10

// maxDecoded bounds a decompressed report, so a corrupt or hostile store
// value cannot exhaust memory.
const maxDecoded = 256 << 20

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// encodeBlob packs a report for storage, compressing it when large, and
// refuses it with ErrTooLarge when the stored form exceeds limit bytes.
func encodeBlob(report []byte, limit int) ([]byte, error) {
	var blob []byte
	if len(report) < compressAbove {
		blob = make([]byte, 0, len(report)+1)
		blob = append(append(blob, blobRaw), report...)
	} else {
		var buf bytes.Buffer
		buf.Grow(len(report)/4 + 64)
		buf.WriteByte(blobGzip)
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(&buf)
		_, err := zw.Write(report)
		if err == nil {
			err = zw.Close()
		}
		gzipWriters.Put(zw)
		if err != nil {
			return nil, fmt.Errorf("compress report: %w", err)
		}
		blob = buf.Bytes()
	}
	if n := len(blob) - 1; n > limit {
		return nil, fmt.Errorf("store report: %w: %d bytes stored form, limit %d", ErrTooLarge, n, limit)
	}
	return blob, nil
}

// decodeBlob unpacks what encodeBlob produced.
func decodeBlob(blob []byte) ([]byte, error) {
	if len(blob) == 0 {
		return nil, errors.New("decode report: empty blob")
	}
	switch blob[0] {
	case blobRaw:
		return bytes.Clone(blob[1:]), nil
	case blobGzip:
		zr, err := gzip.NewReader(bytes.NewReader(blob[1:]))
		if err != nil {
			return nil, fmt.Errorf("decode report: %w", err)
		}
		out, err := io.ReadAll(io.LimitReader(zr, maxDecoded+1))
		if err != nil {
			return nil, fmt.Errorf("decode report: %w", err)
		}
		if len(out) > maxDecoded {
			return nil, fmt.Errorf("decode report: larger than %d bytes", maxDecoded)
		}
		return out, nil
	}
	return nil, fmt.Errorf("decode report: unknown format byte %#x", blob[0])
}
