// Package endbody wraps a response body so that its owner learns when the
// body ended and how many bytes were read: the request records of the
// plain lane (package audit) and of the render lane's proxy (package
// render) both record a request at that moment.
package endbody

import "io"

// Body is a response body that calls Done when it ends: at io.EOF, at a
// read error (with that error), or at Close (a nil error). Done may be
// called more than once; its owner keeps the first call.
type Body struct {
	io.ReadCloser
	// Done receives the bytes read so far and why the body ended.
	Done func(n int64, err error)
	n    int64
}

// Read implements io.Reader, counting the bytes.
func (b *Body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	switch {
	case err == io.EOF:
		b.Done(b.n, nil)
	case err != nil:
		b.Done(b.n, err)
	}
	return n, err
}

// Close implements io.Closer.
func (b *Body) Close() error {
	b.Done(b.n, nil)
	return b.ReadCloser.Close()
}
