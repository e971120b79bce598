package schedule

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"lekta.dev/lekta/internal/escape"
	"lekta.dev/lekta/records"
)

// EventSchema names the webhook event format.
const EventSchema = "lekta.event/v1"

// Event is the JSON body of a webhook: a saved site regressed.
type Event struct {
	Schema    string    `json:"schema"`
	Type      string    `json:"type"`
	Site      string    `json:"site"`
	URL       string    `json:"url"`
	ReportID  string    `json:"report_id"`
	ReportURL string    `json:"report_url"`
	Changes   Changes   `json:"changes"`
	At        time.Time `json:"at"`
}

// WebhookArgs is one webhook delivery; River retries it with backoff (to
// the member's endpoint, never to the audited site).
type WebhookArgs struct {
	SiteID  string `json:"site_id"`
	EntryID string `json:"entry_id" river:"unique"`
	// Body is the event, encoded once so every attempt sends the same bytes.
	Body string `json:"body"`
}

// Kind is River's name for the job.
func (WebhookArgs) Kind() string { return "lekta_webhook" }

// InsertOpts: one delivery per history entry, up to 8 attempts.
func (WebhookArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queueOther, MaxAttempts: 8, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

func (s *Scheduler) queueWebhook(ctx context.Context, site records.Site, e records.Entry, ch Changes) error {
	body, err := escape.JSON(Event{Schema: EventSchema, Type: "regression", Site: site.ID, URL: site.URL,
		ReportID: e.ReportID, ReportURL: s.cfg.ReportURL(e.ReportID), Changes: ch, At: e.RanAt.UTC()}, "")
	if err != nil {
		return err
	}
	if _, err := s.client.Insert(ctx, WebhookArgs{SiteID: site.ID, EntryID: e.ID, Body: string(body)}, nil); err != nil {
		return fmt.Errorf("queue webhook of %s: %w", site.ID, err)
	}
	return nil
}

// Sign is the Lekta-Signature header of body sent at t with secret:
// "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">".
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a Lekta-Signature header against body, refusing one older
// than tolerance at now (what a receiver does; see docs/members.md).
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return errors.New("malformed Lekta-Signature")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return errors.New("Lekta-Signature is too old")
	}
	want := Sign(secret, time.Unix(sec, 0), body)
	if !hmac.Equal([]byte(want), []byte("t="+ts+",v1="+sig)) {
		return errors.New("Lekta-Signature does not match")
	}
	return nil
}

type webhookWorker struct {
	river.WorkerDefaults[WebhookArgs]
	s *Scheduler
}

func (w *webhookWorker) Timeout(*river.Job[WebhookArgs]) time.Duration {
	return WebhookTimeout + 5*time.Second
}

func (w *webhookWorker) Work(ctx context.Context, job *river.Job[WebhookArgs]) error {
	return w.s.deliver(ctx, job.Args, job.Attempt)
}

// deliver posts one webhook through the SSRF guard and records the outcome
// on the site; an error makes River try again later.
func (s *Scheduler) deliver(ctx context.Context, a WebhookArgs, attempt int) error {
	site, err := s.cfg.Records.Site(ctx, a.SiteID)
	if errors.Is(err, records.ErrNotFound) || (err == nil && site.WebhookURL == "") {
		return nil
	}
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	result, derr := s.post(ctx, site, []byte(a.Body), now)
	result = fmt.Sprintf("%s (attempt %d)", result, attempt)
	if err := s.cfg.Records.SetWebhookResult(ctx, site.ID, now, result); err != nil {
		return err
	}
	return derr
}

func (s *Scheduler) post(ctx context.Context, site records.Site, body []byte, now time.Time) (string, error) {
	target, err := s.cfg.Guard.ParseTarget(site.WebhookURL)
	if err != nil {
		return "refused: " + err.Error(), river.JobCancel(err) // never dialled; retrying cannot help
	}
	ctx, cancel := context.WithTimeout(ctx, WebhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return "refused: " + err.Error(), river.JobCancel(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "LektaWebhook/1")
	req.Header.Set("Lekta-Signature", Sign(site.WebhookSecret, now, body))
	resp, err := s.web.Do(req)
	if err != nil {
		return "failed: " + oneLine(err.Error()), fmt.Errorf("deliver webhook: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "answered " + strconv.Itoa(resp.StatusCode), fmt.Errorf("deliver webhook: endpoint answered %d", resp.StatusCode)
	}
	return "delivered, answered " + strconv.Itoa(resp.StatusCode), nil
}

func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
