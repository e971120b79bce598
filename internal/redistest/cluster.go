package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a private Redis Cluster of one test's own: n masters, each a
// Private redis-server with cluster mode on, the 16384 slots split evenly
// between them. A test may move a slot from one master to another while
// clients use it, as a resharding does.
type Cluster struct {
	Nodes []*Private
	ids   []string
	// ranges[i] is the slot range node i was given; moved are the slots
	// moved since, and to which node.
	ranges [][2]int
	moved  map[int]int
}

// StartCluster starts a cluster of n masters and waits until every node
// says cluster_state:ok. Without redis-server installed the test fails
// under CI and is skipped otherwise.
func StartCluster(tb testing.TB, n int) *Cluster {
	tb.Helper()
	c := &Cluster{moved: map[int]int{}}
	for range n {
		c.Nodes = append(c.Nodes, StartPrivate(tb, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-announce-ip", "127.0.0.1", "--cluster-node-timeout", "2000"))
	}
	ctx := context.Background()
	per := 16384 / n
	for i, p := range c.Nodes {
		cl := p.Client(tb)
		id, err := cl.Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			tb.Fatalf("cluster myid: %v", err)
		}
		c.ids = append(c.ids, id)
		lo, hi := i*per, (i+1)*per-1
		if i == n-1 {
			hi = 16383
		}
		c.ranges = append(c.ranges, [2]int{lo, hi})
		if err := cl.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			tb.Fatalf("cluster addslotsrange %d-%d: %v", lo, hi, err)
		}
	}
	first := c.Nodes[0].Client(tb)
	for _, p := range c.Nodes[1:] {
		if err := first.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", p.port).Err(); err != nil {
			tb.Fatalf("cluster meet: %v", err)
		}
	}
	c.waitOK(tb)
	return c
}

// waitOK waits until every node reports the cluster ok and knows every node.
func (c *Cluster) waitOK(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, p := range c.Nodes {
		cl := p.Client(tb)
		for {
			info, err := cl.ClusterInfo(context.Background()).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(c.Nodes))) {
				break
			}
			if time.Now().After(deadline) {
				tb.Fatalf("cluster never became ok on %s: %v %s", p.Addr(), err, info)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// URL is the redis:// URL naming every master as a seed node, as
// go-redis's ParseClusterURL reads it.
func (c *Cluster) URL() string {
	u := "redis://" + c.Nodes[0].Addr()
	for i, p := range c.Nodes[1:] {
		if i == 0 {
			u += "?"
		} else {
			u += "&"
		}
		u += "addr=" + p.Addr()
	}
	return u
}

// Client is a cluster client for the test's own reads and writes.
func (c *Cluster) Client(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	var addrs []string
	for _, p := range c.Nodes {
		addrs = append(addrs, p.Addr())
	}
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ReadTimeout: 10 * time.Second})
	tb.Cleanup(func() { _ = cl.Close() })
	return cl
}

// Owner is the index of the node owning slot.
func (c *Cluster) Owner(slot int) int {
	if n, ok := c.moved[slot]; ok {
		return n
	}
	for i, r := range c.ranges {
		if slot >= r[0] && slot <= r[1] {
			return i
		}
	}
	return -1
}

// MoveSlot migrates slot from its owner to node to, key by key, as
// redis-cli --cluster reshard does: IMPORTING on the target, MIGRATING on
// the source, MIGRATE of every key, then the new owner announced to every
// node. Clients meanwhile get ASK and TRYAGAIN redirections.
func (c *Cluster) MoveSlot(tb testing.TB, slot, to int) {
	tb.Helper()
	ctx := context.Background()
	from := c.Owner(slot)
	if from == to {
		return
	}
	src, dst := c.Nodes[from].Client(tb), c.Nodes[to].Client(tb)
	if err := dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", c.ids[from]).Err(); err != nil {
		tb.Fatalf("setslot importing: %v", err)
	}
	if err := src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", c.ids[to]).Err(); err != nil {
		tb.Fatalf("setslot migrating: %v", err)
	}
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, slot, 10).Result()
		if err != nil {
			tb.Fatalf("getkeysinslot: %v", err)
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", "127.0.0.1", c.Nodes[to].port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := src.Do(ctx, args...).Err(); err != nil {
			tb.Fatalf("migrate %d keys of slot %d: %v", len(keys), slot, err)
		}
	}
	for _, p := range c.Nodes {
		if err := p.Client(tb).Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", c.ids[to]).Err(); err != nil {
			tb.Fatalf("setslot node on %s: %v", p.Addr(), err)
		}
	}
	c.moved[slot] = to
}

// Slot is the cluster slot of key (its {hash tag}, when it has one).
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % 16384)
}

// crc16 is the CRC-16/XMODEM Redis Cluster hashes keys with.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
