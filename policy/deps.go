package policy

import (
	_ "code.dny.dev/ssrf"
	_ "github.com/temoto/robotstxt"
	_ "golang.org/x/net/idna"
)
