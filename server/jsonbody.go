package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
)

// jsonBody is what one JSON body of the API may hold: its largest size
// and, for the refusals, its shape in words ("a url field").
type jsonBody struct {
	limit int64
	shape string
}

// readJSON reads the request's body into dst by the one rule of every JSON
// body of the API: Content-Type application/json, at most b.limit bytes
// (413 too_large beyond), one JSON object whose fields dst knows, and
// nothing after it. Every refusal is a sentence for the client, never the
// decoder's Go words.
func readJSON(w http.ResponseWriter, r *http.Request, b jsonBody, dst any) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return badRequest("Send the body as JSON, with Content-Type: application/json.")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, b.limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return b.refusal(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return b.refusal(err)
		}
		return badRequest("The body must be one JSON object with nothing after it.")
	}
	return nil
}

// refusal says why the decoder refused a body.
func (b jsonBody) refusal(err error) error {
	var (
		tooBig *http.MaxBytesError
		syntax *json.SyntaxError
		wrong  *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &tooBig):
		return &apiError{Status: http.StatusRequestEntityTooLarge, Code: codeTooLarge, outcome: codeTooLarge,
			Message: fmt.Sprintf("The body is larger than %d KiB.", b.limit>>10)}
	case errors.Is(err, io.EOF):
		return badRequest("The body is empty; send a JSON object with " + b.shape + ".")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("The body is not valid JSON: it ends in the middle of a value.")
	case errors.As(err, &syntax):
		return badRequest(fmt.Sprintf("The body is not valid JSON: %s (at byte %d).", syntax.Error(), syntax.Offset))
	case errors.As(err, &wrong) && wrong.Field == "":
		return badRequest("The body must be a JSON object with " + b.shape + ".")
	case errors.As(err, &wrong):
		return badRequest(fmt.Sprintf("The %s field must be %s.", wrong.Field, jsonKind(wrong.Type)))
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return badRequest("Unknown field “" + strings.Trim(field, `"`) + "”.")
	}
	return badRequest("The body must be a JSON object with " + b.shape + ".")
}

// jsonKind names the JSON value a Go type takes, for people.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "an object"
}
