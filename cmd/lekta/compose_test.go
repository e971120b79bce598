package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestComposeFile reads docs/deploy/compose.yaml (no container runtime runs
// on the development machines): three lekta instances on PostgreSQL and
// Redis, Redis with the settings the per-host promise needs, the proxy the
// instances trust being the one in front of them. Where `docker compose`
// exists it also checks the file with `docker compose config`.
func TestComposeFile(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "deploy", "compose.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]struct {
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
			Networks    yaml.Node         `yaml:"networks"`
			Secrets     []string          `yaml:"secrets"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var lekta []string
	for name, s := range f.Services {
		if strings.HasPrefix(name, "lekta") {
			lekta = append(lekta, name)
			for _, k := range []string{"LEKTA_DATABASE_URL", "LEKTA_REDIS_URL", "LEKTA_TRUSTED_PROXY", "LEKTA_CONTACT", "LEKTA_SECRETS_KEY_FILE", "LEKTA_PUBLIC_URL"} {
				if s.Environment[k] == "" {
					t.Errorf("%s sets no %s", name, k)
				}
			}
		}
	}
	if f.Services["lekta1"].Environment["LEKTA_SECRETS_KEY_FILE"] != "/run/secrets/"+strings.Join(f.Services["lekta1"].Secrets, "") {
		t.Errorf("lekta1's secrets key file %q is not its compose secret %v", f.Services["lekta1"].Environment["LEKTA_SECRETS_KEY_FILE"], f.Services["lekta1"].Secrets)
	}
	if len(lekta) != 3 {
		t.Errorf("%d lekta services, want 3: %v", len(lekta), lekta)
	}
	redis := f.Services["redis"].Command
	for _, want := range [][2]string{{"--appendonly", "yes"}, {"--maxmemory-policy", "noeviction"}} {
		i := slices.Index(redis, want[0])
		if i < 0 || i+1 >= len(redis) || redis[i+1] != want[1] {
			t.Errorf("redis command %v lacks %s %s", redis, want[0], want[1])
		}
	}
	if !strings.Contains(string(b), "ipv4_address: "+f.Services["lekta1"].Environment["LEKTA_TRUSTED_PROXY"]) {
		t.Errorf("the instances trust %s, which is not the proxy's address", f.Services["lekta1"].Environment["LEKTA_TRUSTED_PROXY"])
	}
	if exec.Command("docker", "compose", "version").Run() != nil {
		t.Log("docker compose is not available here: the file was read, not checked by docker compose config")
		return
	}
	cmd := exec.Command("docker", "compose", "-f", path, "config", "--quiet")
	cmd.Env = append(os.Environ(), "LEKTA_DB_PASSWORD=test", "LEKTA_CONTACT=mailto:ops@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("docker compose config: %v\n%s", err, out)
	}
}
