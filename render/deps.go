package render

import (
	_ "github.com/chromedp/cdproto/fetch"
	_ "github.com/chromedp/chromedp"
)
