package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"lekta.dev/lekta/policy"
)

const robotsUsage = `usage: lekta robots check FILE AGENT URL
       lekta robots lint FILE

check  says whether AGENT, a product token such as LektaBot, may fetch URL
       (an absolute http(s) URL, or a path such as /shop?page=2; a #fragment
       is ignored) under the robots.txt in FILE, and which group and rule
       decided. URL is taken as typed and decided as Chromium and LektaBot
       send it: escapes kept as written, raw bytes Chromium escapes escaped
       (/café/a|b is sent as /caf%C3%A9/a%7Cb), dot segments removed; the
       path printed is that request. Tokens beyond RFC 9309
       (archive.org_bot) are accepted with a warning.
       Exit status: 0 allowed, 1 disallowed, 2 bad input.
lint   lists the issues of FILE per line as "LINE: SEVERITY: MESSAGE".
       Exit status: 0 without errors (warnings and info allowed), 1 with
       errors, 2 bad input.

FILE "-" reads standard input. Only the first 500 KiB count, as for LektaBot.
`

// runRobots is "lekta robots check|lint".
func runRobots(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runRobotsIO(ctx, args, os.Stdin, stdout, stderr)
}

// runRobotsIO is runRobots with standard input passed in, for FILE "-".
func runRobotsIO(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, robotsUsage)
		return exitWith(exitBadInput, nil)
	}
	switch args[0] {
	case "check":
		if len(args) != 4 {
			fmt.Fprint(stderr, robotsUsage)
			return exitWith(exitBadInput, errors.New("robots check: want FILE AGENT URL"))
		}
		return robotsCheck(args[1], args[2], args[3], stdin, stdout, stderr)
	case "lint":
		if len(args) != 2 {
			fmt.Fprint(stderr, robotsUsage)
			return exitWith(exitBadInput, errors.New("robots lint: want FILE"))
		}
		return robotsLint(args[1], stdin, stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, robotsUsage)
		return nil
	}
	fmt.Fprint(stderr, robotsUsage)
	return exitWith(exitBadInput, fmt.Errorf("robots: unknown command %q", args[0]))
}

// robotsCheck prints the verdict on target for agent and what decided it.
func robotsCheck(file, agent, target string, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := policy.ValidateAgentToken(agent); err != nil {
		return exitWith(exitBadInput, fmt.Errorf("robots check: AGENT: %w", err))
	}
	if err := policy.ValidateToken(agent); err != nil {
		fmt.Fprintf(stderr, "warning: %q is not an RFC 9309 product token (only letters, '_' and '-'); groups that name it as written apply to it\n", agent)
	}
	u, err := checkURL(target)
	if err != nil {
		return exitWith(exitBadInput, fmt.Errorf("robots check: URL: %w", err))
	}
	robots, err := readRobots(file, stdin)
	if err != nil {
		return exitWith(exitBadInput, fmt.Errorf("robots check: %w", err))
	}
	d := robots.DecideURL(agent, u)
	verdict := "allowed"
	if !d.Allowed {
		verdict = "disallowed"
	}
	fmt.Fprintf(stdout, "%s: %s %s\n", verdict, agent, policy.RequestTarget(u))
	fmt.Fprintf(stdout, "group: %s\n", describeGroup(d, agent))
	fmt.Fprintf(stdout, "rule:  %s\n", describeRule(d))
	switch d.Reading {
	case policy.ReadingGoogle:
		fmt.Fprintln(stdout, "reading: only Google's parser disallows it (RFC 9309 as written would allow it); LektaBot obeys the stricter reading")
	case policy.ReadingRFC:
		fmt.Fprintln(stdout, "reading: only RFC 9309 disallows it (Google's parser would allow it); LektaBot obeys the stricter reading")
	}
	if d.Partial {
		fmt.Fprintf(stdout, "note:  robots.txt is larger than %d bytes; this answer covers only that much of it, all LektaBot reads\n", policy.RobotsMaxBytes)
	}
	if n := countSeverity(robots.Issues(), policy.SeverityError); n > 0 {
		fmt.Fprintf(stderr, "note: %s has %d lint error(s); run \"lekta robots lint %s\"\n", file, n, file)
	}
	if !d.Allowed {
		return exitWith(exitFailure, nil)
	}
	return nil
}

// checkURL parses check's URL argument, an absolute http(s) URL or a path.
// A fragment is never sent to a server, so it is ignored, whatever it holds.
func checkURL(raw string) (*url.URL, error) {
	raw, _, _ = strings.Cut(raw, "#")
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", policy.ErrInvalidURL, err)
	}
	switch {
	case u.Scheme != "":
		if s := strings.ToLower(u.Scheme); (s != "http" && s != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: %q is not an absolute http(s) URL", policy.ErrInvalidURL, raw)
		}
	case !strings.HasPrefix(raw, "/") || u.Host != "":
		return nil, fmt.Errorf("%w: %q is neither an absolute http(s) URL nor a path starting with /", policy.ErrInvalidURL, raw)
	}
	return u, nil
}

// describeGroup says which group applied.
func describeGroup(d policy.Decision, agent string) string {
	switch d.Basis {
	case policy.BasisRobotsTxt:
		return "none needed"
	case policy.BasisNoGroup:
		return fmt.Sprintf("none names %s and there is no \"*\" group, so no rules apply", agent)
	}
	return fmt.Sprintf("%s (line %d)", visible(d.Group), d.GroupLine)
}

// describeRule says which rule decided.
func describeRule(d policy.Decision) string {
	switch d.Basis {
	case policy.BasisRule:
		return fmt.Sprintf("%s (line %d)", visible(d.Rule), d.Line)
	case policy.BasisRobotsTxt:
		return "/robots.txt is always allowed (RFC 9309 section 2.2.2)"
	}
	return "none matches, so the path is allowed"
}

// visible returns s as written when every character of it shows as
// itself, and else Go-quoted, so that a control character from the file
// (a vertical tab, an ESC sequence) reaches the terminal as an escape.
func visible(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return r != ' ' && !unicode.IsGraphic(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}

// robotsLint prints every issue and fails when one is an error.
func robotsLint(file string, stdin io.Reader, stdout io.Writer) error {
	robots, err := readRobots(file, stdin)
	if err != nil {
		return exitWith(exitBadInput, fmt.Errorf("robots lint: %w", err))
	}
	issues := robots.Issues()
	for _, is := range issues {
		fmt.Fprintln(stdout, is)
	}
	errs := countSeverity(issues, policy.SeverityError)
	fmt.Fprintf(stdout, "%d error(s), %d warning(s), %d info\n",
		errs, countSeverity(issues, policy.SeverityWarning), countSeverity(issues, policy.SeverityInfo))
	if errs > 0 {
		return exitWith(exitFailure, nil)
	}
	return nil
}

// readRobots reads and parses FILE ("-": stdin), no more than LektaBot would.
func readRobots(file string, stdin io.Reader) (*policy.Robots, error) {
	r := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("read robots.txt: %w", err)
		}
		defer f.Close()
		r = f
	}
	body, err := io.ReadAll(io.LimitReader(r, policy.RobotsMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read robots.txt %s: %w", file, err)
	}
	return policy.ParseRobots(body), nil
}

func countSeverity(issues []policy.RobotsIssue, sev policy.Severity) int {
	n := 0
	for _, is := range issues {
		if is.Severity == sev {
			n++
		}
	}
	return n
}
