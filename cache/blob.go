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

// encodeBlob packs a report for storage, gzip-compressed when large and
// compressible, and refuses it with ErrTooLarge when the stored form exceeds
// limit bytes. Compression stops as soon as the output passes the limit.
func encodeBlob(report []byte, limit int) ([]byte, error) {
	if len(report) >= compressAbove {
		blob, err := gzipBlob(report, limit)
		switch {
		case err == nil && len(blob) <= len(report):
			return blob, nil
		case err != nil && !errors.Is(err, errOverLimit):
			return nil, fmt.Errorf("compress report: %w", err)
		}
		// gzip did not help, or passed the limit: raw may still fit.
	}
	if len(report) > limit {
		return nil, fmt.Errorf("store report: %w: %d bytes, more than %d even compressed", ErrTooLarge, len(report), limit)
	}
	blob := make([]byte, 0, len(report)+1)
	return append(append(blob, blobRaw), report...), nil
}

// errOverLimit stops a compression whose output passed the limit.
var errOverLimit = errors.New("over limit")

// cappedBuffer is a buffer that refuses to grow past limit bytes.
type cappedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		return 0, errOverLimit
	}
	return b.Buffer.Write(p)
}

func gzipBlob(report []byte, limit int) ([]byte, error) {
	buf := &cappedBuffer{limit: limit + 1} // + the format byte
	buf.Grow(min(len(report)/4, limit) + 64)
	buf.Buffer.WriteByte(blobGzip)
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(buf)
	if _, err := zw.Write(report); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
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
