package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"lekta.dev/lekta/audit"
	"lekta.dev/lekta/cache"
	"lekta.dev/lekta/compare"
	"lekta.dev/lekta/policy"
)

// Error codes of the API's {"error": {"code", "message"}} bodies.
const (
	codeInvalidURL    = "invalid_url"
	codeBadRequest    = "bad_request"
	codeTargetRefused = "target_refused"
	codeForbidden     = "forbidden"
	codeNotFound      = "not_found"
	codeRateLimited   = "rate_limited"
	codeUnavailable   = "unavailable"
	codeInternal      = "internal"
)

// apiError is an error as a client sees it: a status, a stable code, a
// message for people and, for 429 and 503, when to retry. The cause stays
// in the logs.
type apiError struct {
	Status     int
	Code       string
	Message    string
	RetryAfter time.Duration
	// SiteID names the saved site a conflict is about.
	SiteID  string
	outcome string
	cause   error
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func (e *apiError) Unwrap() error { return e.cause }

// retryAfterSeconds is the Retry-After value, at least 1 when set.
func (e *apiError) retryAfterSeconds() int64 {
	if e.RetryAfter <= 0 {
		return 0
	}
	return max(1, int64(math.Ceil(e.RetryAfter.Seconds())))
}

// setRetryAfter writes the Retry-After header when e has one.
func (e *apiError) setRetryAfter(h http.Header) {
	if s := e.retryAfterSeconds(); s > 0 {
		h.Set("Retry-After", strconv.FormatInt(s, 10))
	}
}

// errorFor maps any error of the auditor or the handlers to what the client
// is told. It is the one place where errors become statuses; unknown errors
// become a 500 without their text.
func errorFor(err error) *apiError {
	var e *apiError
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, policy.ErrInvalidURL):
		return &apiError{Status: http.StatusBadRequest, Code: codeInvalidURL, Message: compare.Sentence(err.Error()),
			outcome: outcomeInvalidURL, cause: err}
	case errors.Is(err, policy.ErrTargetRefused):
		return &apiError{Status: http.StatusForbidden, Code: codeTargetRefused, Message: compare.Sentence(err.Error()),
			outcome: outcomeRefused, cause: err}
	case errors.Is(err, audit.ErrUnavailable):
		return &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable,
			Message:    outageWords(err) + ", so no audit can start; try again in " + compare.Duration(storeRetryAfter) + ".",
			RetryAfter: storeRetryAfter, outcome: outcomeUnavailable, cause: err}
	case errors.Is(err, audit.ErrNotFound):
		return notFound()
	case errors.Is(err, cache.ErrAbandoned):
		// Its holder gave up storing the report, or stopped: its lease
		// lapsed, so the host takes a new audit.
		return &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable,
			Message:    "The audit ran but could not be saved; submit the URL again.",
			RetryAfter: queueRetryAfter, outcome: outcomeFailed, cause: err}
	case errors.Is(err, context.Canceled):
		return &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable,
			Message:    "The audit ended without a result; submit the URL again.",
			RetryAfter: queueRetryAfter, outcome: outcomeFailed, cause: err}
	}
	return &apiError{Status: http.StatusInternalServerError, Code: codeInternal,
		Message: "Something went wrong on our side; the error was logged.", outcome: outcomeFailed, cause: err}
}

func badRequest(msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: codeBadRequest, Message: msg, outcome: codeBadRequest}
}

func notFound() *apiError {
	return &apiError{Status: http.StatusNotFound, Code: codeNotFound,
		Message: "No report has this id (reports expire, and ids cannot be guessed)."}
}

func clientLimited(wait time.Duration, windows []cache.Window) *apiError {
	wait = max(time.Second, time.Duration(math.Ceil(wait.Seconds()))*time.Second)
	var limits []string
	for _, w := range windows {
		limits = append(limits, fmt.Sprintf("%d per %s", w.N, compare.Duration(w.Per)))
	}
	return &apiError{Status: http.StatusTooManyRequests, Code: codeRateLimited, RetryAfter: wait,
		Message: fmt.Sprintf("You have submitted more audits than this service takes from one address (%s); try again in %s.",
			strings.Join(limits, ", "), compare.Duration(wait)), outcome: outcomeClientLimited}
}

func hostLimited(rep *audit.Report) *apiError {
	msg := rep.Reason
	if msg == "" {
		msg = "The per-host limits refused this audit."
	}
	return &apiError{Status: http.StatusTooManyRequests, Code: codeRateLimited, Message: msg,
		RetryAfter: time.Duration(rep.RetryAfterS) * time.Second, outcome: outcomeRateLimited}
}

// unavailableRefusal is the answer when the shared queue did not take a
// submission: nothing was queued or charged.
func unavailableRefusal(err error) *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable,
		Message:    queueWords(err) + ", so no audit was queued; try again in " + compare.Duration(storeRetryAfter) + ".",
		RetryAfter: storeRetryAfter, outcome: outcomeUnavailable, cause: err}
}

// queueRefusal is the answer when the queue takes no submission: it is
// full, or this instance is shutting down (the metrics and logs name each).
func queueRefusal(err error) *apiError {
	msg, outcome := "The audit queue is full; try again in "+compare.Duration(queueRetryAfter)+".", outcomeQueueFull
	if errors.Is(err, errStopping) {
		msg = "This server is shutting down and takes no new audits; try again in " + compare.Duration(queueRetryAfter) + "."
		outcome = outcomeShuttingDown
	}
	return &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable, Message: msg,
		RetryAfter: queueRetryAfter, outcome: outcome, cause: err}
}
