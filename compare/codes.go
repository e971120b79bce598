package compare

import "slices"

// Finding codes. They are stable: reports, docs/report.md and API clients rely
// on them. FindingCodes describes each one.
const (
	CodeTitleRenderOnly           = "title.render_only"
	CodeTitlePlainOnly            = "title.plain_only"
	CodeTitleChanged              = "title.changed"
	CodeTitleMissing              = "title.missing"
	CodeTitleLong                 = "title.long"
	CodeTitleMultiple             = "title.multiple"
	CodeMetaDescriptionRenderOnly = "meta_description.render_only"
	CodeMetaDescriptionPlainOnly  = "meta_description.plain_only"
	CodeMetaDescriptionChanged    = "meta_description.changed"
	CodeMetaDescriptionMissing    = "meta_description.missing"
	CodeMetaDescriptionLength     = "meta_description.length"
	CodeMetaDescriptionInBody     = "meta_description.in_body"
	CodeMetaDescriptionMultiple   = "meta_description.multiple"
	CodeCanonicalRenderOnly       = "canonical.render_only"
	CodeCanonicalPlainOnly        = "canonical.plain_only"
	CodeCanonicalChanged          = "canonical.changed"
	CodeCanonicalHeaderMismatch   = "canonical.header_mismatch"
	CodeCanonicalConflicting      = "canonical.conflicting"
	CodeCanonicalInvalid          = "canonical.invalid"
	CodeCanonicalRelative         = "canonical.relative"
	CodeCanonicalInBody           = "canonical.in_body"
	CodeCanonicalRoot             = "canonical.points_to_root"
	CodeCanonicalAlternate        = "canonical.points_to_alternate"
	CodeCanonicalOtherDomain      = "canonical.other_domain"
	CodeRobotsNoindexRenderOnly   = "robots.noindex_render_only"
	CodeRobotsNoindexPlainOnly    = "robots.noindex_plain_only"
	CodeRobotsNofollowRenderOnly  = "robots.nofollow_render_only"
	CodeRobotsNofollowPlainOnly   = "robots.nofollow_plain_only"
	CodeRobotsNoindex             = "robots.noindex"
	CodeRobotsNofollow            = "robots.nofollow"
	CodeRobotsChanged             = "robots.changed"
	CodeRobotsBotMetaChanged      = "robots.bot_meta_changed"
	CodeXRobotsTagChanged         = "x_robots_tag.changed"
	CodeRobotsUnavailableAfter    = "robots.unavailable_after"
	CodeRobotsBotNoindex          = "robots.bot_noindex"
	CodeLangRenderOnly            = "lang.render_only"
	CodeLangPlainOnly             = "lang.plain_only"
	CodeLangChanged               = "lang.changed"
	CodeHreflangRenderOnly        = "hreflang.render_only"
	CodeHreflangPlainOnly         = "hreflang.plain_only"
	CodeHreflangChanged           = "hreflang.changed"
	CodeHreflangInvalid           = "hreflang.invalid_code"
	CodeHreflangSpaces            = "hreflang.spaces"
	CodeHreflangRelative          = "hreflang.relative"
	CodeHreflangMissingHref       = "hreflang.missing_href"
	CodeHreflangInBody            = "hreflang.in_body"
	CodeHreflangNoSelf            = "hreflang.no_self"
	CodeHreflangNoXDefault        = "hreflang.no_x_default"
	CodeH1RenderOnly              = "h1.render_only"
	CodeH1PlainOnly               = "h1.plain_only"
	CodeH1Changed                 = "h1.changed"
	CodeHeadingsRenderOnly        = "headings.render_only"
	CodeHeadingsPlainOnly         = "headings.plain_only"
	CodeJSONLDRenderOnly          = "json_ld.render_only"
	CodeJSONLDPlainOnly           = "json_ld.plain_only"
	CodeJSONLDInvalid             = "json_ld.invalid"
	CodeLinksRenderOnly           = "links.render_only"
	CodeLinksPlainOnly            = "links.plain_only"
	CodeLinksNonDescriptive       = "links.non_descriptive"
	CodeLinksUncrawlable          = "links.uncrawlable"
	CodeContentRenderOnly         = "content.render_only"
	CodeContentPlainOnly          = "content.plain_only"
	CodeOpenGraphRenderOnly       = "open_graph.render_only"
	CodeOpenGraphPlainOnly        = "open_graph.plain_only"
	CodeOpenGraphChanged          = "open_graph.changed"
	CodeImagesMissingAlt          = "images.missing_alt"
	CodeStatusDiffers             = "status.differs"
	CodeStatusNotOK               = "status.not_ok"
	CodeFinalURLDiffers           = "final_url.differs"
	CodePlainMissing              = "plain.missing"
	CodePlainTruncated            = "plain.truncated"
	CodePlainNotHTML              = "plain.not_html"
	CodeRenderMissing             = "render.missing"
	CodeRenderTruncated           = "render.truncated"
	CodeRenderConsoleErrors       = "render.console_errors"
	CodeRenderExceptions          = "render.exceptions"
	CodeRenderBlockedRobots       = "render.blocked_robots"
	CodeRenderFailedRequests      = "render.failed_requests"
	CodeRenderNotSettled          = "render.not_settled"
	CodeRenderBudget              = "render.budget"
	CodeRenderNavigated           = "render.navigated"
	CodeRenderBlockedMethod       = "render.blocked_method"
	CodeRenderCookiesRefused      = "render.cookies_refused"
	CodeRenderWebSocket           = "render.websocket"
	CodeRenderRefusedFeatures     = "render.refused_features"
	CodeHTMLTooDeep               = "html.too_deep"
	CodeHTMLOverGooglebotLimit    = "html.over_googlebot_limit"
	CodeExtractTruncated          = "extract.truncated"

	// Codes the audit pipeline adds for a lane that did not finish ("lane." +
	// its outcome); Diff never produces them.
	CodeLaneError   = "lane.error"
	CodeLaneTimeout = "lane.timeout"
	CodeLaneSkipped = "lane.skipped"
	CodeLaneBlocked = "lane.blocked"

	// Codes the audit pipeline adds from robots.txt; Diff never produces them.
	CodeRobotsDisallowed  = "robots.disallowed"
	CodeRobotsUnreachable = "robots.unreachable"

	// Codes the audit pipeline adds when the site itself cannot be reached
	// (robots.txt, the first request of an audit, never got an answer);
	// Diff never produces them.
	CodeSiteDNS     = "site.dns"
	CodeSiteRefused = "site.connection_refused"
	CodeSiteTLS     = "site.tls"
	CodeSiteTimeout = "site.timeout"
	CodeSiteNetwork = "site.network"

	// CodePageSlow: the page's first byte took longer than SlowTTFB.
	CodePageSlow = "page.slow"

	// Codes of the parser cause (issue 24, part 2).
	// CodeHeadEndedEarly: a token the head may not hold ended it before
	// </head>, and the parser moved head-only tags after it into <body>.
	CodeHeadEndedEarly = "head.ended_early"
	// Soft 404s and the redirects only a browser follows (issue 24).
	CodeSoft404                   = "soft_404.detected"
	CodeSoft404RenderOnly         = "soft_404.render_only"
	CodeSoft404Handled            = "soft_404.handled"
	CodeRenderRedirectScript      = "render.redirect_script"
	CodeRenderRedirectMetaRefresh = "render.redirect_meta_refresh"
	CodeRenderHistoryPath         = "render.history_path"
)

// pipelineCodes are the codes in the table that Diff itself never produces.
var pipelineCodes = []string{
	CodeLaneError, CodeLaneTimeout, CodeLaneSkipped, CodeLaneBlocked,
	CodeRobotsDisallowed, CodeRobotsUnreachable,
	CodeSiteDNS, CodeSiteRefused, CodeSiteTLS, CodeSiteTimeout, CodeSiteNetwork,
}

// CodeInfo describes one finding code, for the report page and docs/report.md.
type CodeInfo struct {
	Code string `json:"code"`
	// Severity is the highest severity a finding with this code can have.
	Severity Severity `json:"severity"`
	// Explanation is one paragraph for site owners: what the finding means
	// and what to do about it.
	Explanation string `json:"explanation"`
}

// codeTable is the one list of finding codes; Diff only emits codes in it.
var codeTable = []CodeInfo{
	{CodeTitleRenderOnly, SeverityCritical, "The <title> exists only after JavaScript runs. AI crawlers and other fetchers that do not render see a page without a title and have to guess what it is about. Put the title in the HTML the server sends."},
	{CodeTitlePlainOnly, SeverityWarning, "The server HTML has a <title> but scripts remove it, so browsers and rendering search engines see no title. Stop the script from clearing document.title."},
	{CodeTitleChanged, SeverityWarning, "Scripts replace the server's <title> with another one. AI crawlers keep the server's title while browsers and Google show the scripted one; make the server send the final title."},
	{CodeTitleMissing, SeverityWarning, "Neither the server HTML nor the rendered page has a <title>. Every indexable page should have a short, specific title."},
	{CodeHTMLOverGooglebotLimit, SeverityWarning, "The server HTML is larger than 2 MB. Google documents that Googlebot reads only the first 2 MB of an HTML file and indexes nothing past it. The finding names the head fields, structured data and shares of the words and links that lie past 2 MB. Put what matters first, or make the page smaller (inline data, styles and scripts are the usual bulk)."},
	{CodeTitleMultiple, SeverityWarning, "The document has more than one <title> element, for example one a head-merging library added after the template's own. Browsers show the first (document.title), and search engines use it too; the others are ignored, so the title you meant may not be the one shown. The finding quotes each; keep one."},
	{CodeMetaDescriptionMultiple, SeverityInfo, "The head has more than one meta description. Search engines read the first; the others are ignored. The finding quotes each; keep one."},
	{CodeTitleLong, SeverityInfo, "The <title> is longer than 70 characters. Search results cut titles at about 60 characters (600 pixels), so the end is not shown; put what matters first."},
	{CodeMetaDescriptionMissing, SeverityWarning, "Neither the server HTML nor the rendered page has a meta description, or it is empty or only spaces (non-breaking ones included). Search engines and AI answers then write their own summary from the page; add one or two sentences that say what it offers."},
	{CodeMetaDescriptionLength, SeverityInfo, "The meta description is shorter than 25 or longer than 160 characters. Search engines show about 160 characters and tend to replace very short descriptions with text from the page."},
	{CodeMetaDescriptionInBody, SeverityInfo, "A <meta name=\"description\"> stands in <body>. Search engines and Lighthouse read the description only in <head>, so it does not count as the page's description; move it into <head>."},
	{CodeMetaDescriptionRenderOnly, SeverityWarning, "The meta description is added by JavaScript. Fetchers that do not render never see it and write their own snippet; put it in the server HTML."},
	{CodeMetaDescriptionPlainOnly, SeverityInfo, "The server HTML has a meta description that scripts remove. Browsers and rendering crawlers see none."},
	{CodeMetaDescriptionChanged, SeverityInfo, "Scripts change the meta description, so AI crawlers and rendering search engines read different summaries of the page. Serve the final description in the HTML."},
	{CodeCanonicalRenderOnly, SeverityWarning, "The canonical link is added by JavaScript. Fetchers that do not render miss it and may index duplicate URLs; put <link rel=\"canonical\"> in the server HTML."},
	{CodeCanonicalPlainOnly, SeverityWarning, "The server HTML declares a canonical URL that scripts remove. Rendering search engines then see no canonical; keep the element in the DOM."},
	{CodeCanonicalChanged, SeverityCritical, "The server HTML and the rendered page name different canonical URLs. Search engines receive conflicting signals and AI crawlers follow the server's one; make both the same."},
	{CodeCanonicalHeaderMismatch, SeverityWarning, "The canonical in the Link response header differs from the <link rel=\"canonical\"> element. Send one canonical URL in both places."},
	{CodeCanonicalConflicting, SeverityWarning, "The document has several canonical links pointing to different URLs; search engines then ignore all of them. Keep exactly one."},
	{CodeCanonicalInvalid, SeverityWarning, "The canonical link (element or Link header) is not a URL: it has spaces or a malformed host, or a scheme other than http(s). Search engines ignore it, as if there were none. Write the page's absolute URL."},
	{CodeCanonicalRelative, SeverityInfo, "The canonical URL is written as a relative URL. Google resolves it against the page, but it is a common source of mistakes (a copy on another host or under another path names itself as canonical); write the absolute URL. Covers the Link header too."},
	{CodeCanonicalInBody, SeverityInfo, "A <link rel=\"canonical\"> stands in <body>. Google and Lighthouse ignore canonical links outside <head>, so it neither counts nor conflicts; move it into <head>."},
	{CodeCanonicalRoot, SeverityWarning, "The canonical URL is the site's root (the home page) while the page itself is deeper. Search engines may then index only the home page; each page should name its own URL."},
	{CodeCanonicalAlternate, SeverityWarning, "The canonical URL points to another language version of the page (one of its hreflang alternates). Each language version should be its own canonical, or search engines drop the other languages."},
	{CodeCanonicalOtherDomain, SeverityInfo, "The canonical URL is on another domain. Right for content syndicated from there; otherwise search engines index the other domain's page instead of this one."},
	{CodeRobotsUnavailableAfter, SeverityWarning, "An unavailable_after directive (meta robots or X-Robots-Tag, generic or for this bot) names a date that has passed, so search engines treat the page as noindex. Remove the directive or move the date if the page should stay indexed."},
	{CodeRobotsBotNoindex, SeverityWarning, "A robots meta or X-Robots-Tag addressed to particular crawlers (googlebot, bingbot, gptbot, ...) says noindex (or none). Those crawlers drop the page while others may index it; the crawlers table shows each one's view. Fine if intended."},
	{CodeRobotsNoindexRenderOnly, SeverityCritical, "Scripts add a noindex that the server HTML lacks. Rendering search engines such as Google drop the page from their index, while AI crawlers that do not render still index it. Decide which you want and serve it in the HTML."},
	{CodeRobotsNoindexPlainOnly, SeverityCritical, "The server HTML says noindex and scripts remove it. Crawlers that do not render (AI crawlers) obey the noindex, and Google may not render a page marked noindex at all, so the page is likely not indexed anywhere. Remove noindex from the server HTML if the page should be found."},
	{CodeRobotsNofollowRenderOnly, SeverityWarning, "Scripts add nofollow, so rendering crawlers stop following the page's links while non-rendering ones follow them."},
	{CodeRobotsNofollowPlainOnly, SeverityWarning, "The server HTML says nofollow and scripts remove it; crawlers that do not render will not follow the page's links."},
	{CodeRobotsNoindex, SeverityInfo, "Both lanes say noindex: the page asks every robot (or this bot) not to index it. Fine if intended."},
	{CodeRobotsNofollow, SeverityInfo, "Both lanes say nofollow: robots are asked not to follow the page's links. Fine if intended."},
	{CodeRobotsChanged, SeverityInfo, "Scripts change the robots meta content (for example max-snippet) without changing index or follow. Crawlers that do not render read the server's version."},
	{CodeRobotsBotMetaChanged, SeverityWarning, "Robots metas addressed to one crawler (googlebot, gptbot, ...) differ between the server HTML and the rendered page, so that crawler may be told something different from what you see in the browser."},
	{CodeXRobotsTagChanged, SeverityWarning, "The X-Robots-Tag response header differs between the plain fetch and the browser's request. The server may answer bots differently; check that every client gets the directives you intend."},
	{CodeLangRenderOnly, SeverityWarning, "The <html lang> attribute is set by JavaScript. Fetchers that do not render cannot tell the page's language; set it in the server HTML."},
	{CodeLangPlainOnly, SeverityInfo, "Scripts remove the <html lang> attribute of the server HTML."},
	{CodeLangChanged, SeverityWarning, "Scripts change the page language declared in <html lang>. AI crawlers read the server's language; serve the right one."},
	{CodeHreflangInvalid, SeverityWarning, "An hreflang value is not a language code search engines accept: it must be x-default or a BCP 47 language (optionally with script and region) from the IANA registry, with hyphens (de, de-AT, zh-Hans-CN), so that alternate is ignored."},
	{CodeHreflangSpaces, SeverityWarning, "An hreflang value has leading or trailing spaces. Lekta reports it as written instead of trimming it into a valid code; not every consumer trims, so write the code alone."},
	{CodeHreflangRelative, SeverityWarning, "An hreflang alternate's href is not an absolute URL. Search engines expect fully qualified URLs for alternates; write scheme and host."},
	{CodeHreflangMissingHref, SeverityWarning, "An hreflang alternate has no href, so it names a language but no page. Add the URL of that language version."},
	{CodeHreflangInBody, SeverityInfo, "hreflang alternates stand in <body>, where search engines ignore them; they are not counted. Put them in <head> or a Link header."},
	{CodeHreflangNoSelf, SeverityInfo, "The hreflang alternates do not include the page itself (its URL or its canonical). Each language version should list every version, itself included."},
	{CodeHreflangNoXDefault, SeverityInfo, "The hreflang alternates have no x-default, the version for visitors whose language none of the others match. Optional, but recommended."},
	{CodeHreflangRenderOnly, SeverityWarning, "hreflang alternates are added by JavaScript, so fetchers that do not render do not learn about the page's language versions. Put them in the server HTML or a Link header."},
	{CodeHreflangPlainOnly, SeverityInfo, "Scripts remove hreflang alternates that the server HTML declares."},
	{CodeHreflangChanged, SeverityWarning, "The hreflang alternates differ between the server HTML and the rendered page. Serve one consistent set."},
	{CodeH1RenderOnly, SeverityWarning, "The page's <h1> exists only after JavaScript runs, so AI crawlers see no main heading. Render it on the server."},
	{CodeH1PlainOnly, SeverityWarning, "The server HTML has an <h1> that scripts remove or replace with nothing."},
	{CodeH1Changed, SeverityInfo, "Scripts change the text of the <h1>. AI crawlers read the server's heading."},
	{CodeHeadingsRenderOnly, SeverityInfo, "Some subheadings (h2–h6) exist only after JavaScript runs, so the outline AI crawlers see is incomplete."},
	{CodeHeadingsPlainOnly, SeverityInfo, "Some subheadings (h2–h6) in the server HTML are removed by scripts."},
	{CodeJSONLDRenderOnly, SeverityWarning, "Structured data (JSON-LD) is injected by JavaScript. Fetchers that do not render miss these types entirely; put the JSON-LD in the server HTML."},
	{CodeJSONLDPlainOnly, SeverityInfo, "Structured data types present in the server HTML are gone after scripts run."},
	{CodeJSONLDInvalid, SeverityWarning, "A JSON-LD block is not valid JSON, so every consumer ignores it. Fix the syntax."},
	{CodeLinksRenderOnly, SeverityCritical, "Links that exist only after JavaScript runs cannot be discovered by crawlers that do not render. Critical when most of the rendered page's links are missing from the server HTML (at least three), a warning otherwise. Render navigation and product links as plain <a href> in the server HTML."},
	{CodeLinksNonDescriptive, SeverityWarning, "Some links have text that says nothing about their target (\"click here\", \"read more\", \"mehr\", \"aquí\"), judged in the language of the element holding the text (every listed language when that is unknown or mixed), as Lighthouse's link-text audit judges them; nofollow links and links to the page itself are not judged. Search engines and screen readers use link text to understand where a link leads; describe the target."},
	{CodeLinksUncrawlable, SeverityWarning, "Some anchors cannot be followed by crawlers: javascript:, file: or ftp: hrefs; <a> without href that has an event listener (in the rendered page read from the browser, addEventListener included), role=link or an attribute meant for an href (target, rel, ...); href=\"#\" with an event listener; hash routes (href=\"#/guide\", \"#!/guide\", or the page's own URL with such a fragment), listener or not, since the fragment never reaches the server. role=button and other non-link roles are exempt, as in Lighthouse. They are counted per lane and listed as uncrawlable links, not among the page's links. Use <a href> with a real URL; for a hash route that means a real path (history API routing)."},
	{CodeLinksPlainOnly, SeverityInfo, "Links in the server HTML are removed by scripts; browsers and rendering crawlers do not see them."},
	{CodeContentRenderOnly, SeverityCritical, "Part of the page's text appears only after JavaScript runs, so AI crawlers that do not render never read it. Critical when the server HTML has less than half of the rendered words, a warning below 90%. Serve the content in the HTML (server-side rendering or pre-rendering)."},
	{CodeContentPlainOnly, SeverityInfo, "The server HTML has text that the rendered page does not show (for example <noscript> content or text scripts replace). AI crawlers read it; browsers do not."},
	{CodeOpenGraphRenderOnly, SeverityWarning, "Open Graph tags are added by JavaScript. Link previews in chat apps and social networks do not run scripts and show no title or image; put og: tags in the server HTML."},
	{CodeOpenGraphPlainOnly, SeverityInfo, "Scripts remove Open Graph tags that the server HTML has."},
	{CodeOpenGraphChanged, SeverityInfo, "Scripts change Open Graph tags; link previews use the server's values."},
	{CodeImagesMissingAlt, SeverityInfo, "Some images have no alt attribute, so crawlers and screen readers cannot tell what they show. Add alt text (alt=\"\" for decoration)."},
	{CodeStatusDiffers, SeverityCritical, "The plain fetch and the browser got different HTTP statuses for the same URL. Critical when only one of them succeeded: the server may treat bots differently."},
	{CodeStatusNotOK, SeverityCritical, "The page did not answer with a 2xx status in this lane, so crawlers do not index its content."},
	{CodeFinalURLDiffers, SeverityWarning, "The two lanes ended at different URLs after redirects. The server redirects bots and browsers differently."},
	{CodePlainMissing, SeverityWarning, "The plain lane produced no document (it failed or timed out), so nothing could be compared; the report shows the rendered page alone."},
	{CodePlainTruncated, SeverityWarning, "The server HTML was larger than the plain lane reads; the extract covers only the first part. Very large HTML is also cut off by many crawlers."},
	{CodePlainNotHTML, SeverityWarning, "The URL did not answer with an HTML document, so there is no page content to compare."},
	{CodeRenderMissing, SeverityWarning, "The browser lane produced no document (it failed or timed out), so nothing could be compared; the report shows the server HTML alone."},
	{CodeRenderTruncated, SeverityWarning, "The rendered document was larger than the render lane keeps; the extract covers only the first part."},
	{CodeRenderConsoleErrors, SeverityInfo, "The page logged errors to the browser console while rendering. They may explain missing content."},
	{CodeRenderExceptions, SeverityWarning, "Scripts threw uncaught exceptions while rendering, so content they should produce may be missing for browsers and rendering crawlers too."},
	{CodeRenderBlockedMethod, SeverityWarning, "The page tried to send data to a server while rendering (a form submission, or a POST, PUT or DELETE from script). LektaBot refused it, as crawlers never submit forms or send data; content that appears only after such a request is missing for every crawler."},
	{CodeRenderCookiesRefused, SeverityInfo, "The page tried to store or send cookies or HTTP credentials while rendering. LektaBot sends none, like crawlers, which keep no cookies between requests; if the page needs a cookie or a login to show its content, crawlers do not see that content."},
	{CodeRenderRefusedFeatures, SeverityWarning, "The page tried browser features that Google's renderer does not offer (IndexedDB, WebSQL, service workers, WebGL, permission requests); the render lane refused them as Google's renderer does, so content that depends on them is missing for Googlebot as well."},
	{CodeRenderWebSocket, SeverityWarning, "The page tried to open a WebSocket while rendering. LektaBot refuses WebSockets, as Googlebot's renderer does, so content that needs a WebSocket is invisible to Googlebot as well; load it with an ordinary request."},
	{CodeRenderBlockedRobots, SeverityWarning, "robots.txt disallows resources the page needs to render (scripts, data). Rendering crawlers cannot load them either, so they may see a broken page; allow them."},
	{CodeRenderFailedRequests, SeverityInfo, "Some resources the page requested failed to load while rendering."},
	{CodeRenderNotSettled, SeverityWarning, "The page kept loading until the render lane's cap (a request that never finished, or more requests than one audit allows), so the rendered view may be incomplete. Pages that never finish loading are hard for rendering crawlers too."},
	{CodeRenderBudget, SeverityInfo, "The page was still working when its budget of page time ran out (an interval, an animation loop, a timer due later). Renderers stop at some point too: content that appears later than the budget is not seen by them. Show important content early, not after timers."},
	{CodeRenderNavigated, SeverityCritical, "A script navigated the browser to another page. Crawlers that do not run JavaScript stay on the first one; use a server redirect instead. Differences between the server HTML and the page the browser ended on follow from the redirect; they are listed under it, and the finding is as severe as the worst of them (critical when crawlers that stay miss most of what the browser shows)."},
	{CodeHTMLTooDeep, SeverityInfo, "Elements nest more than 512 deep. Browsers and parsers flatten such markup and some fetchers give up; simplify it."},
	{CodeExtractTruncated, SeverityInfo, "The page has more of something (links, headings, images, ...) than a report keeps; the report lists the first ones and names the fields it cut."},
	{CodeRobotsDisallowed, SeverityCritical, "robots.txt disallows this URL for LektaBot; the report names the group and rule, and the crawlers table shows which other crawlers the file keeps out. Crawlers that honour the rule never fetch the page, so nothing on it reaches them. A person asked for this audit, so it ran once as a user-triggered fetch (the page's own scripts and styles included); scheduled re-audits skip the URL. If you want AI crawlers to read the page, allow it."},
	{CodeSiteDNS, SeverityCritical, "The site's host name does not resolve (or the name servers did not answer), so no crawler can reach it and nothing was fetched. Check the DNS records of the name, or the spelling of the address."},
	{CodeSiteRefused, SeverityCritical, "The site's server refused the connection: nothing listens on that port, or a firewall rejects it. No crawler can fetch the page; nothing was fetched, robots.txt included."},
	{CodeSiteTLS, SeverityCritical, "The secure connection to the site failed: the certificate is expired, self-signed or for another name, or the server does not speak TLS on that port. Crawlers refuse such connections as browsers do; nothing was fetched."},
	{CodeSiteTimeout, SeverityCritical, "The site did not accept a connection in time, so no crawler can reach it; nothing was fetched. The server may be down or a firewall may drop the traffic silently."},
	{CodeSiteNetwork, SeverityCritical, "The site could not be reached: the network has no route to it or the connection was reset. Nothing was fetched."},
	{CodePageSlow, SeverityWarning, "The page took longer than 5 seconds to send its first byte. No AI crawler operator publishes a fetch timeout; the figures reported by others for GPTBot, ClaudeBot and PerplexityBot are 2 to 8 seconds, so a slower page is likely abandoned by some of them. Cache the page or speed up the server."},
	{CodeRobotsUnreachable, SeverityWarning, "robots.txt answered 429 or 5xx, timed out or could not be reached. RFC 9309 says to treat that as \"crawl nothing\", so the audit was skipped (no retry). Make robots.txt answer 200 or 404; many crawlers stop visiting a site whose robots.txt fails."},
	{CodeLaneError, SeverityWarning, "This lane could not fetch the page (a network, TLS or browser error, named in the message). The report shows what the other lane saw."},
	{CodeLaneTimeout, SeverityWarning, "This lane did not finish before the audit's deadline; the report keeps what the other lane saw."},
	{CodeLaneSkipped, SeverityWarning, "This lane was not run (for example because robots.txt could not be read or the other lane already failed)."},
	{CodeLaneBlocked, SeverityWarning, "This lane's request was refused before it left (the address is not public, or robots.txt disallows it)."},

	// Codes of the parser cause (issue 24, part 2).
	{CodeHeadEndedEarly, SeverityWarning, "The HTML parser ends <head> at the first thing a head may not hold (an <img>, an <iframe>, a <div>, stray text, a snippet pasted into the head) and puts everything after it into <body>, where search engines ignore the canonical, hreflang links, robots and description metas. The finding names that token and its line in the server HTML, and lists the tags it moved; the findings about those tags in <body> carry the same cause. An <img> inside a <noscript> of the head ends it only for parsers without scripting, as crawlers that do not render parse. Move the token into <body>, after the head's tags."},
	{CodeSoft404, SeverityWarning, "The page answers 200 but says it was not found: its title, first heading or the start of its text is not-found wording (\"page not found\", \"404\", \"Seite nicht gefunden\", \"ページが見つかりません\", in more than 20 languages), and it has little other content. Google treats such a page as a soft 404 and drops it, other crawlers may index the error page as content. Answer 404 (or 410 when the page is gone for good)."},
	{CodeSoft404RenderOnly, SeverityWarning, "The server answers 200 with HTML that does not say the page is missing, but the rendered page is the app's not-found page. Google will likely classify the URL as a soft 404, and AI crawlers that do not render index the empty shell as a page. Answer 404 for addresses the app does not know; if that is not possible, add a noindex on the not-found route or send the browser to an address that answers 404."},
	{CodeSoft404Handled, SeverityInfo, "The rendered page is the app's not-found page and the app handles it as Google recommends for pages rendered in the browser: a script adds a noindex, or sends the browser to an address that answers 404 or 410. Google does not index the URL; nothing to fix for Google. Crawlers that do not render still receive the server's 200 page."},
	{CodeRenderRedirectScript, SeverityCritical, "A script sent the browser to another address (a location assignment); the message names the target and when it fired. Crawlers that do not render (GPTBot, ClaudeBot, PerplexityBot and most other fetchers) never follow a script redirect; Google follows it only when it renders the page. Use a server redirect (301 or 308). Differences between the server HTML and the page the browser ended on follow from the redirect; they are listed under it, and the finding is as severe as the worst of them (critical when crawlers that stay miss most of what the browser shows)."},
	{CodeRenderRedirectMetaRefresh, SeverityCritical, "A meta refresh sent the browser to another address; the message names the target, when it fired and its delay. Google treats an instant meta refresh (0 s) like a permanent redirect and a delayed one like a temporary redirect; whether AI crawlers follow a meta refresh is not documented by their operators. A server redirect (301 or 308) works for every crawler. Differences between the server HTML and the page the browser ended on follow from the redirect; they are listed under it, and the finding is as severe as the worst of them (critical when crawlers that stay miss most of what the browser shows)."},
	{CodeRenderHistoryPath, SeverityCritical, "A script changed the address to another path with the history API (pushState or replaceState) without loading a new document. Crawlers that do not render keep the first URL and its server HTML. If the new address is the page's real one, redirect to it on the server. Differences between the server HTML and the page the browser ended on follow from the redirect; they are listed under it, and the finding is as severe as the worst of them (critical when crawlers that stay miss most of what the browser shows)."},
}

// codeIndex maps a code to its CodeInfo.
var codeIndex = func() map[string]CodeInfo {
	m := make(map[string]CodeInfo, len(codeTable))
	for _, c := range codeTable {
		m[c.Code] = c
	}
	return m
}()

// FindingCodes returns every finding code a report can carry, sorted by
// code: those Diff produces and the lane.* codes the audit pipeline adds for
// a lane that did not finish. The slice is a fresh copy.
func FindingCodes() []CodeInfo {
	out := slices.Clone(codeTable)
	slices.SortFunc(out, func(a, b CodeInfo) int {
		switch {
		case a.Code < b.Code:
			return -1
		case a.Code > b.Code:
			return 1
		}
		return 0
	})
	return out
}

// LookupCode returns the description of a finding code.
func LookupCode(code string) (CodeInfo, bool) {
	c, ok := codeIndex[code]
	return c, ok
}
