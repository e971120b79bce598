package pgtest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestSharedCluster checks that the shared cluster is not the system's,
// answers with the password only, and gives each test its own database.
func TestSharedCluster(t *testing.T) {
	c := Shared(t)
	if c.Port() == 5432 {
		t.Fatal("the test cluster is on the system cluster's port 5432")
	}
	u1, u2 := Database(t), Database(t)
	if u1 == u2 || !strings.Contains(u1, ":"+c.Password()+"@") {
		t.Fatalf("databases %q and %q: want two, each URL with the password", u1, u2)
	}
	bin, _ := binDir()
	query := func(url, sql string) (string, error) {
		out, err := exec.Command(bin+"/psql", "-X", "-At", url, "-c", sql).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := query(u1, "SELECT current_database()"); err != nil || !strings.HasPrefix(out, "t_") {
		t.Fatalf("query the test database: %v %s", err, out)
	}
	wrong := strings.Replace(u1, c.Password(), "wrong", 1)
	if out, err := query(wrong, "SELECT 1"); err == nil || !strings.Contains(out, "password authentication failed") {
		t.Fatalf("a wrong password connected: %v %s", err, out)
	}
}

// TestPrivateStopStart stops a private cluster and starts it again on the
// same port with its data kept.
func TestPrivateStopStart(t *testing.T) {
	c := StartPrivate(t)
	url := c.Database(t)
	bin, _ := binDir()
	psql := func(sql string) (string, error) {
		out, err := exec.Command(bin+"/psql", "-X", "-At", url, "-c", sql).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := psql("CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	port := c.Port()
	c.Stop(t)
	if _, err := psql("SELECT 1"); err == nil {
		t.Fatal("the stopped cluster answered")
	}
	c.Start(t)
	if c.Port() != port {
		t.Logf("port %d was taken meanwhile; restarted on %d", port, c.Port())
		url = strings.Replace(url, ":"+strconv.Itoa(port)+"/", ":"+strconv.Itoa(c.Port())+"/", 1)
	}
	if out, err := psql("SELECT n FROM kept"); err != nil || out != "7" {
		t.Fatalf("after restart: %v %q, want 7", err, out)
	}
}
