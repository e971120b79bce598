package cache

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua sources live in lua/; each script is the clock prelude followed by
// its body (admit and reserve: and the decision parts between them), so every script
// reads time the same way.
var (
	//go:embed lua/clock.lua
	luaClock string
	//go:embed lua/decide.lua
	luaDecide string
	//go:embed lua/admit.lua
	luaAdmit string
	//go:embed lua/reserve.lua
	luaReserve string
	//go:embed lua/renew.lua
	luaRenew string
	//go:embed lua/setprogress.lua
	luaSetProgress string
	//go:embed lua/getprogress.lua
	luaGetProgress string
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
	// admit and reserve share the decision's parts, decide.lua, so both
	// read the limits exactly alike.
	scriptAdmit       = redis.NewScript(luaClock + luaDecide + luaAdmit)
	scriptReserve     = redis.NewScript(luaClock + luaDecide + luaReserve)
	scriptRenew       = redis.NewScript(luaClock + luaRenew)
	scriptSetProgress = redis.NewScript(luaClock + luaSetProgress)
	scriptGetProgress = redis.NewScript(luaClock + luaGetProgress)
	scriptComplete    = redis.NewScript(luaClock + luaComplete)
	scriptLookup      = redis.NewScript(luaClock + luaLookup)
	scriptPutReport   = redis.NewScript(luaClock + luaPutReport)
	scriptGetReport   = redis.NewScript(luaClock + luaGetReport)
	scriptRunning     = redis.NewScript(luaClock + luaRunning)
)

// Codes of the admit script's first reply element.
const (
	replyAdmitted = 1
	replyCached   = 2
	replyInFlight = 3
	replyRefused  = 4
	replyReserved = 5
)
