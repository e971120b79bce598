package audit

// RobotsSection is report.robots: what robots.txt said about the page.
type RobotsSection struct {
	URL        string `json:"url"`
	Outcome    string `json:"outcome"`
	HTTPStatus int    `json:"http_status"`
	Size       int    `json:"size"`
	Allowed    bool   `json:"allowed"`
	Group      string `json:"group,omitempty"`
	Rule       string `json:"rule,omitempty"`
}
