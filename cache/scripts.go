package cache

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua sources live in lua/; each script is the clock prelude followed by
// its body, so every script reads time the same way.
var (
	//go:embed lua/clock.lua
	luaClock string
	//go:embed lua/admit.lua
	luaAdmit string
	//go:embed lua/complete.lua
	luaComplete string
	//go:embed lua/lookup.lua
	luaLookup string
	//go:embed lua/putreport.lua
	luaPutReport string
	//go:embed lua/getreport.lua
	luaGetReport string
	//go:embed lua/running.lua
	luaRunning string
)

var (
	scriptAdmit     = redis.NewScript(luaClock + luaAdmit)
	scriptComplete  = redis.NewScript(luaClock + luaComplete)
	scriptLookup    = redis.NewScript(luaClock + luaLookup)
	scriptPutReport = redis.NewScript(luaClock + luaPutReport)
	scriptGetReport = redis.NewScript(luaClock + luaGetReport)
	scriptRunning   = redis.NewScript(luaClock + luaRunning)
)

// Codes of the admit script's first reply element.
const (
	replyAdmitted = 1
	replyCached   = 2
	replyInFlight = 3
	replyRefused  = 4
)
