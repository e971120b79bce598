package cache

import (
	"fmt"
	"testing"

	"lekta.dev/lekta/internal/redistest"
)

// keySlot is the Redis Cluster slot of key (redistest.Slot).
func keySlot(key string) int { return redistest.Slot(key) }

// hostKeys lists every key and channel the store uses for one URL of a host.
func hostKeys(k keyspace, url, id string) []string {
	t, err := parseTarget(url)
	if err != nil {
		panic(err)
	}
	return []string{k.lease(t.host), k.leaseStarts(t.host), k.starts(t.host), k.resv(t.host), k.run(t), k.result(t),
		k.fin(t.host, id), k.done(t.host, id)}
}

// TestHostKeysShareSlot computes the cluster slot of every key a host uses,
// for several URLs and ids of the host, and asserts they are one slot, the
// slot of the bare hostname.
func TestHostKeysShareSlot(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		host string
		urls []string
	}{
		{"plain", "shop.example", []string{"https://shop.example/", "http://shop.example:8080/a?b=c", "https://SHOP.example./x"}},
		{"idn", "xn--bcher-kva.example", []string{"https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/p"}},
		{"ipv6 literal", "2001:db8::1", []string{"http://[2001:db8::1]/", "http://[2001:db8::1]:8443/x"}},
		{"ipv4", "203.0.113.9", []string{"http://203.0.113.9/", "http://203.0.113.9:81/y"}},
	}
	for _, prefix := range []string{DefaultPrefix, "lekta-test:0a1b:", ""} {
		k := keyspace{prefix: prefix}
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s prefix %q", tc.name, prefix), func(t *testing.T) {
				want := keySlot(tc.host)
				for i, u := range tc.urls {
					for _, key := range hostKeys(k, u, fmt.Sprintf("id-%d", i)) {
						if got := keySlot(key); got != want {
							t.Errorf("key %s in slot %d, want %d (slot of %s)", key, got, want, tc.host)
						}
					}
				}
			})
		}
	}
}

// TestSlotsMatchRedis checks keySlot against CLUSTER KEYSLOT of a real
// cluster-mode redis-server, so the slot test above proves what it claims.
func TestSlotsMatchRedis(t *testing.T) {
	t.Parallel()
	c := startCluster(t).Client(t)
	k := keyspace{prefix: DefaultPrefix}
	keys := append(hostKeys(k, "https://shop.example/a", "id1"), hostKeys(k, "http://[::1]:8080/", "x")...)
	keys = append(keys, k.report("r1"), "123456789", "{}x", "a{}{b}", "{user1000}.following")
	for _, key := range keys {
		got, err := c.ClusterKeySlot(bg, key).Result()
		if err != nil {
			t.Fatalf("cluster keyslot %s: %v", key, err)
		}
		if int(got) != keySlot(key) {
			t.Errorf("key %q: Redis says slot %d, keySlot %d", key, got, keySlot(key))
		}
	}
}

func TestParseTarget(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, url, host string
		ok              bool
	}{
		{"port dropped", "https://shop.example:8443/a", "shop.example", true},
		{"case folded", "https://Shop.EXAMPLE/a", "shop.example", true},
		{"trailing dot", "https://shop.example./", "shop.example", true},
		{"ipv6", "http://[::1]:80/", "::1", true},
		{"relative", "/a/b", "", false},
		{"brace", "https://{a}.example/", "", false},
		{"unparsable", "http://[::1", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTarget(tc.url)
			if (err == nil) != tc.ok || got.host != tc.host {
				t.Fatalf("parseTarget(%q) = %+v, %v; want host %q ok %v", tc.url, got, err, tc.host, tc.ok)
			}
			if tc.ok && (got.url != tc.url || len(got.hash) != 32) {
				t.Fatalf("parseTarget(%q) = %+v", tc.url, got)
			}
		})
	}
	a, _ := parseTarget("https://shop.example/a")
	b, _ := parseTarget("https://shop.example/a?")
	if a.hash == b.hash {
		t.Fatal("different URL strings share a cache hash")
	}
}
