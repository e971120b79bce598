package cache

import _ "github.com/redis/go-redis/v9"
