package render

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domdebugger"
	"github.com/chromedp/cdproto/runtime"
)

// maxListenerAnchors bounds the anchors whose event listeners one render
// asks Chromium about: one protocol round trip each.
const maxListenerAnchors = 200

// listenerAnchorsJS collects, in the isolated world, the <a> elements of
// the document and its open shadow roots that have no href a crawler could
// follow (none, empty, an in-page fragment, javascript:): the ones whose
// event listeners decide whether they are links in disguise.
const listenerAnchorsJS = `(() => {
  const max = %d, out = [];
  const visit = (root) => {
    for (const a of root.querySelectorAll('a')) {
      if (out.length >= max) return;
      const h = a.getAttribute('href');
      if (h === null || /^\s*(#|$|javascript:)/i.test(h)) out.push(a);
    }
    for (const el of root.querySelectorAll('*')) {
      if (out.length >= max) return;
      if (el.shadowRoot && el.shadowRoot.mode === 'open') visit(el.shadowRoot);
    }
  };
  visit(document);
  return out;
})()`

// markListeners sets an attribute of a name new to this render on every
// such anchor that Chromium lists an event listener for
// (DOMDebugger.getEventListeners: listeners added with addEventListener
// too, which leave no trace in the markup; the anchor's own only, not its
// ancestors'), and returns the name, for RenderDetails.ListenerMark. The
// snapshot that follows carries the attribute to the extractor. It returns
// "" when no anchor has a listener, and with an error the mark of the
// anchors marked before it.
func (a *audit) markListeners(ctx context.Context, world runtime.ExecutionContextID) (string, error) {
	const group = "lekta-listeners"
	defer cdp.Call(context.WithoutCancel(ctx), a.t.target, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: group})
	res, err := cdp.Call(ctx, a.t.target, runtime.Evaluate, runtime.EvaluateParams{
		Expression:  fmt.Sprintf(listenerAnchorsJS, maxListenerAnchors),
		ContextID:   world,
		ObjectGroup: group,
		Silent:      new(true),
	})
	switch {
	case err != nil:
		return "", fmt.Errorf("find anchors: %w", err)
	case res.ExceptionDetails != nil:
		return "", fmt.Errorf("find anchors: %s", exceptionText(res.ExceptionDetails))
	case res.Result == nil || res.Result.ObjectID == "":
		return "", nil
	}
	props, err := cdp.Call(ctx, a.t.target, runtime.GetProperties, runtime.GetPropertiesParams{
		ObjectID: res.Result.ObjectID, OwnProperties: new(true),
	})
	if err != nil {
		return "", fmt.Errorf("list anchors: %w", err)
	}
	mark := ""
	for _, p := range props.Result {
		if p.Value == nil || p.Value.ObjectID == "" || p.Value.Subtype != runtime.RemoteObjectSubtypeNode {
			continue
		}
		// Depth 0: the anchor's own listeners; Pierce: those of every world,
		// the page's included (the anchor is an isolated-world object).
		l, err := cdp.Call(ctx, a.t.target, domdebugger.GetEventListeners, domdebugger.GetEventListenersParams{
			ObjectID: p.Value.ObjectID, Depth: new(int64(0)), Pierce: new(true),
		})
		if err != nil {
			return mark, fmt.Errorf("event listeners: %w", err)
		}
		if len(l.Listeners) == 0 {
			continue
		}
		if mark == "" {
			if mark, err = newMark("listener"); err != nil {
				return "", err
			}
		}
		if _, err := cdp.Call(ctx, a.t.target, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: `function() { this.setAttribute("` + mark + `", ""); }`,
			ObjectID:            p.Value.ObjectID,
			Silent:              new(true),
		}); err != nil {
			return mark, fmt.Errorf("mark anchor: %w", err)
		}
	}
	return mark, nil
}

// newMark is a fresh attribute name of a kind ("listener", "write") a
// page cannot guess, for the marks the lane sets before the snapshot.
func newMark(kind string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("%s mark: %w", kind, err)
	}
	return "data-lekta-" + kind + "-" + hex.EncodeToString(b[:]), nil
}
