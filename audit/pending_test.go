package audit

import "testing"

func TestWaitReason(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, limit, want string }{
		{"none", "", ""},
		{"one a minute", "1/1m", "the site was audited less than a minute ago (LektaBot starts at most 1 audit a minute per site)"},
		{"five an hour", "5/1h", "the site was audited 5 times in the last hour (LektaBot starts at most 5 audits an hour per site)"},
		{"odd span", "3/2s", "the site was audited 3 times in the last 2 s (LektaBot starts at most 3 audits every 2 s per site)"},
		{"concurrency", "concurrency", "another audit of the site is running (LektaBot audits a site one page at a time)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := WaitReason(tc.limit); got != tc.want {
				t.Errorf("WaitReason(%q) = %q, want %q", tc.limit, got, tc.want)
			}
		})
	}
}
