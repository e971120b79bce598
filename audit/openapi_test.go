package audit

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"lekta.dev/lekta/internal/apischema"
)

// The report a program reads is the one the API document describes: every
// golden report, and the reports of the verdict tests, are validated
// against the server's openapi.json by a JSON Schema 2020-12 validator.

var (
	apiDocOnce sync.Once
	apiDocRaw  []byte
	apiDocErr  error
)

// reportSchema checks b against the Report schema of openapi.json.
func validateReport(tb testing.TB, b []byte) error {
	tb.Helper()
	apiDocOnce.Do(func() {
		apiDocRaw, apiDocErr = os.ReadFile(filepath.Join("..", "server", "web", "openapi.json"))
	})
	if apiDocErr != nil {
		tb.Fatal(apiDocErr)
	}
	return apischema.Load(tb, apiDocRaw).Validate(tb, "/components/schemas/Report", b)
}

func TestGoldenReportsMatchOpenAPI(t *testing.T) {
	for name, b := range goldenReports(t) {
		if err := validateReport(t, b); err != nil {
			t.Errorf("%s does not match openapi.json: %v", name, err)
		}
	}
}
