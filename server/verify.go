package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/verify"
)

// Verifier answers "was this request LektaBot?"; *verify.Verifier over the
// records database implements it.
type Verifier interface {
	Verify(ctx context.Context, c verify.Claim) (verify.Answer, error)
}

var _ Verifier = (*verify.Verifier)(nil)

// codeUnreadableLine is the API error code of a log line or field that
// could not be read; the message names the part.
const codeUnreadableLine = "unreadable_line"

// verifyAnswer is the API's answer to POST /api/v1/verify: yes or no and
// the sentence, and for yes the time, source and lane. Nothing else.
type verifyAnswer struct {
	// Verifiable is false when this instance keeps no request records.
	Verifiable bool   `json:"verifiable"`
	Match      bool   `json:"match"`
	Message    string `json:"message"`
	Time       string `json:"time,omitempty"`
	Source     string `json:"source,omitempty"`
	Lane       string `json:"lane,omitempty"`
}

// verifyRequest is the JSON body (and the form's fields): a log line with
// an optional host, or the fields one by one.
type verifyRequest struct {
	Line      string `json:"line"`
	Host      string `json:"host"`
	Time      string `json:"time"`
	Client    string `json:"client"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	UserAgent string `json:"user_agent"`
}

// claim reads the request into a claim: the line when there is one.
func (v verifyRequest) claim() (verify.Claim, error) {
	if strings.TrimSpace(v.Line) != "" {
		return verify.ParseLine(v.Line, v.Host)
	}
	return verify.ParseFields(verify.Fields{Time: v.Time, Client: v.Client, Host: v.Host, Method: v.Method, Path: v.Path, UserAgent: v.UserAgent})
}

// noRecordsSentence is the answer when records are off.
const noRecordsSentence = "This instance keeps no request records, so there is nothing to verify against: it cannot say whether the request was LektaBot's."

// verifyClaim runs one verification for client: the per-client limit, the
// parse, the matcher. Errors are *apiError.
func (s *Server) verifyClaim(ctx context.Context, req verifyRequest, client string) (verifyAnswer, error) {
	count := func(answer string) { s.metrics.verifies.WithLabelValues(answer).Inc() }
	if s.cfg.Verifier == nil {
		count("off")
		return verifyAnswer{Message: noRecordsSentence}, nil
	}
	if wait, ok := s.verifies.allow(client); !ok {
		count("limited")
		return verifyAnswer{}, verifyLimited(wait, s.cfg.ClientRate)
	}
	c, err := req.claim()
	if err != nil {
		count("unreadable")
		return verifyAnswer{}, &apiError{Status: http.StatusBadRequest, Code: codeUnreadableLine, Message: sentenceOf(err.Error()), outcome: codeUnreadableLine}
	}
	a, err := s.cfg.Verifier.Verify(ctx, c)
	if err != nil {
		count("unavailable")
		s.cfg.Logger.Warn("verify a log line", "error", err)
		return verifyAnswer{}, &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable,
			Message:    "The records database did not answer; try again in " + compare.Duration(storeRetryAfter) + ".",
			RetryAfter: storeRetryAfter, cause: err}
	}
	out := verifyAnswer{Verifiable: true, Match: a.Match, Message: a.Sentence()}
	count(map[bool]string{true: "yes", false: "no"}[a.Match])
	if a.Match {
		out.Time, out.Source, out.Lane = a.At.UTC().Format("2006-01-02T15:04:05.000Z07:00"), a.Source.String(), a.Lane
	}
	return out, nil
}

// sentenceOf capitalises a message.
func sentenceOf(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// verifyLimited is the refusal of a client that verified too often.
func verifyLimited(wait time.Duration, windows []cache.Window) *apiError {
	e := clientLimited(wait, windows)
	e.Message = strings.Replace(e.Message, "submitted more audits than this service takes", "asked for more verifications than this service answers", 1)
	return e
}

// verifyAPI is POST /api/v1/verify.
func (s *Server) verifyAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		req, err := readVerify(w, r)
		if err == nil {
			var a verifyAnswer
			if a, err = s.verifyClaim(r.Context(), req, clientAddr(r, s.cfg.TrustedProxies)); err == nil {
				writeJSON(w, http.StatusOK, a)
				return
			}
		}
		writeError(w, err)
	})
}

// verifyBody is the body of POST /api/v1/verify.
var verifyBody = jsonBody{limit: maxAPIBody, shape: "a line and a host field, or host, time, client, method, path and user_agent fields"}

// readVerify reads the JSON body of POST /api/v1/verify.
func readVerify(w http.ResponseWriter, r *http.Request) (verifyRequest, error) {
	var v verifyRequest
	err := readJSON(w, r, verifyBody, &v)
	return v, err
}

// verifyView is what verify.html renders.
type verifyView struct {
	Req               verifyRequest
	Answer            *verifyAnswer
	Error             string
	RecordsOn         bool
	RecordsTTL        string
	PublicAddrUnknown bool
	Token             string
}

// verifyPage serves GET /bot/verify (the empty form) and POST /bot/verify
// (the answer under the form). The form posts only from this origin.
func (s *Server) verifyPage() http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		v := verifyView{RecordsOn: s.cfg.Verifier != nil, RecordsTTL: compare.Span(s.cfg.Policy.RequestRecordsTTL),
			PublicAddrUnknown: s.cfg.Policy.PublicAddrUnknown, Token: s.cfg.Policy.view().Token}
		if r.Method != http.MethodPost {
			s.pages.render(w, r, http.StatusOK, "verify", v)
			return
		}
		fail := func(e *apiError) {
			e.setRetryAfter(w.Header())
			v.Error = e.Message
			s.pages.render(w, r, e.Status, "verify", v)
		}
		if err := cop.Check(r); err != nil {
			fail(&apiError{Status: http.StatusForbidden, Code: codeForbidden, Message: "This form only accepts submissions from its own pages."})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			fail(badRequest("the form could not be read"))
			return
		}
		f := r.PostForm
		v.Req = verifyRequest{Line: f.Get("line"), Host: f.Get("host"), Time: f.Get("time"), Client: f.Get("client"),
			Method: f.Get("method"), Path: f.Get("path"), UserAgent: f.Get("user_agent")}
		a, err := s.verifyClaim(r.Context(), v.Req, clientAddr(r, s.cfg.TrustedProxies))
		if err != nil {
			fail(errorFor(err))
			return
		}
		v.Answer = &a
		s.pages.render(w, r, http.StatusOK, "verify", v)
	})
}
