package render

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"

	"lekta.dev/lekta/compare"
)

// snapshotJS serializes the document, open shadow roots included (as
// <template shadowrootmode="open">), and cuts it at %d bytes. It runs in an
// isolated world, so page script that replaced DOM methods cannot feed it.
const snapshotJS = `(() => {
  const max = %d;
  const roots = [];
  const collect = (root) => {
    const w = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      const sr = n.shadowRoot;
      if (sr && sr.mode === 'open') { roots.push(sr); collect(sr); }
    }
  };
  let html = '';
  const de = document.documentElement;
  if (de) {
    collect(document);
    const esc = (v) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
    let attrs = '';
    for (const a of de.attributes) attrs += ' ' + a.name + '="' + esc(a.value) + '"';
    const inner = typeof de.getHTML === 'function'
      ? de.getHTML({serializableShadowRoots: false, shadowRoots: roots})
      : de.innerHTML;
    html = '<html' + attrs + '>' + inner + '</html>';
  }
  const dt = document.doctype;
  if (dt) {
    let d = '<!DOCTYPE ' + dt.name;
    if (dt.publicId) d += ' PUBLIC "' + dt.publicId + '"';
    if (dt.systemId) d += (dt.publicId ? '' : ' SYSTEM') + ' "' + dt.systemId + '"';
    html = d + '>' + html;
  }
  let bytes = -1, truncated = false;
  if (html.length * 3 > max) {
    const enc = new TextEncoder().encode(html);
    bytes = enc.length;
    if (enc.length > max) {
      html = new TextDecoder().decode(enc.subarray(0, max)).replace(/\uFFFD$/, '');
      truncated = true;
    }
  }
  return {html, bytes, truncated, url: location.href,
          contentType: document.contentType, charset: document.characterSet};
})()`

// domResult is what snapshotJS returns.
type domResult struct {
	HTML        string `json:"html"`
	Bytes       int64  `json:"bytes"`
	Truncated   bool   `json:"truncated"`
	URL         string `json:"url"`
	ContentType string `json:"contentType"`
	Charset     string `json:"charset"`
}

// snapshot serializes the main frame's DOM.
func (a *audit) snapshot(ctx context.Context) (domResult, error) {
	world, err := a.isolatedWorld(ctx)
	if err != nil {
		return domResult{}, err
	}
	// Listeners are read before the DOM is serialized, so the snapshot
	// carries their mark; without them the anchors are judged by their
	// markup alone, which is no reason to fail the render.
	a.listenerMark, _ = a.markListeners(ctx, world)
	a.refused, _ = a.refusedFeatures(ctx)
	// Without the recorder's writes the report's causes are unknown, which
	// is no reason to fail the render either.
	a.causes = a.readCauses(ctx, world)
	a.resolveCauses(ctx)
	res, err := cdp.Call(ctx, a.t.target, runtime.Evaluate, runtime.EvaluateParams{
		Expression:    fmt.Sprintf(snapshotJS, a.opts.MaxBodyBytes),
		ContextID:     world,
		ReturnByValue: new(true),
		Silent:        new(true),
	})
	if err != nil {
		return domResult{}, fmt.Errorf("serialize DOM: %w", err)
	}
	if res.ExceptionDetails != nil {
		return domResult{}, fmt.Errorf("serialize DOM: %s", exceptionText(res.ExceptionDetails))
	}
	var d domResult
	if res.Result == nil || json.Unmarshal(res.Result.Value, &d) != nil {
		return domResult{}, fmt.Errorf("serialize DOM: unexpected result")
	}
	if d.Bytes < 0 {
		d.Bytes = int64(len(d.HTML))
	}
	// The page's size is reported without the write marks the lane added.
	d.Bytes = max(d.Bytes-markBytes(d.HTML, a.causes.mark), 0)
	if len(d.HTML) > a.opts.MaxBodyBytes {
		d.HTML = cutUTF8(d.HTML, a.opts.MaxBodyBytes)
		d.Truncated = true
	}
	return d, nil
}

// cutUTF8 cuts s to at most n bytes at a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// assemble builds the snapshot from the DOM and what the render recorded.
func (a *audit) assemble(d domResult, settled settleResult) *compare.Snapshot {
	resp, redirects, docURL, requests := a.net.main()
	s := &compare.Snapshot{
		Lane:         compare.LaneRender,
		RequestedURL: a.req.URL,
		FinalURL:     firstNonEmpty(docURL, d.URL),
		Body:         []byte(d.HTML),
		Bytes:        d.Bytes,
		Truncated:    d.Truncated,
		Charset:      strings.ToLower(d.Charset),
		ContentType:  strings.ToLower(d.ContentType),
		Redirects:    redirects,
		UserAgent:    a.b.UserAgent(),
		FetchedAt:    a.start,
	}
	if resp != nil {
		s.Status = int(resp.Status)
		s.Header = toHeader(resp.Headers)
		if resp.MimeType != "" {
			s.ContentType = strings.ToLower(resp.MimeType)
		}
		s.Timings.TTFB = ttfb(resp.Timing)
	}
	s.Timings.Total = time.Since(a.start)
	s.Render = a.renderDetails(settled, requests)
	return s
}

// renderDetails is what the lane did to the page: what it refused and
// counted, how the render settled, and what the page's scripts wrote.
func (a *audit) renderDetails(settled settleResult, requests int) *compare.RenderDetails {
	use := a.t.proxy.usage()
	a.rec.mu.Lock()
	defer a.rec.mu.Unlock()
	details := &compare.RenderDetails{
		Blocked:            make(map[string]int, len(a.rec.blocked)+len(use.blocked)),
		BlockedURLs:        append([]compare.BlockedRequest(nil), a.rec.blockedURLs...),
		ConsoleErrors:      append([]string(nil), a.rec.consoleErrs...),
		Exceptions:         append([]string(nil), a.rec.exceptions...),
		FailedRequests:     append([]compare.FailedRequest(nil), a.rec.failures...),
		Requests:           requests + int(a.sourceMaps.Load()),
		SourceMaps:         int(a.sourceMaps.Load()),
		Data:               a.causes.data,
		Code:               a.causes.code,
		Navigations:        a.navigations(),
		Settled:            settled.settled(),
		SettledBy:          settled.by,
		PageTime:           settled.pageTime,
		Budget:             a.opts.Budget,
		PendingRequests:    settled.pending,
		CookiesRefused:     use.cookies,
		CredentialsRefused: use.credentials,
		ListenerMark:       a.listenerMark,
		RefusedFeatures:    a.refused,
		WriteMark:          a.causes.mark,
		Writes:             a.causes.writes,
		FieldWrites:        a.causes.fields,
		WritesTampered:     a.causes.tampered,
		ClientRedirects:    append(append([]compare.ClientRedirect(nil), a.rec.redirects...), a.causes.history...),
		Timing:             a.stages.result(),
	}
	for k, v := range a.rec.blocked {
		details.Blocked[k] += v
	}
	for k, v := range use.blocked {
		details.Blocked[k] += v
	}
	for _, b := range use.blockedURLs {
		if len(details.BlockedURLs) >= maxBlockedURLs {
			break
		}
		details.BlockedURLs = append(details.BlockedURLs, b)
	}
	return details
}

// ttfb is the time from sending the request to the first response byte.
func ttfb(t *network.ResourceTiming) time.Duration {
	if t == nil {
		return 0
	}
	first := t.ReceiveHeadersStart
	if first <= 0 {
		first = t.ReceiveHeadersEnd
	}
	if first <= 0 || first < t.SendStart {
		return 0
	}
	return time.Duration((first - t.SendStart) * float64(time.Millisecond))
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
