package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The reference MCP servers come from npm: scripts/lib/mcp.sh installs the
// versions pinned by testdata/npm and sets RATH_TEST_MCP to the directory
// holding them.
const referenceEnv = "RATH_TEST_MCP"

// reference returns the directory of the reference servers. Without them
// the test skips, saying what is missing and how to get it — unless
// RATH_REQUIRE (comma-separated) names mcp: then it fails, so CI skips
// nothing.
func reference(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(referenceEnv)
	msg := ""
	if dir == "" {
		msg = referenceEnv + " is not set, so the reference MCP servers from npm are not installed " +
			"(run `source scripts/lib/mcp.sh && rath_mcp_install`, which installs them and sets it; scripts/test does)"
	} else if _, err := exec.LookPath("node"); err != nil {
		msg = "node is not on PATH (scripts/lib/mcp.sh installs it)"
	} else {
		for _, name := range []string{"server-everything", "server-filesystem", "server-memory"} {
			if _, err := os.Stat(referenceEntry(dir, name)); err != nil {
				msg = fmt.Sprintf("%s=%s has no @modelcontextprotocol/%s (run rath_mcp_install again): %v", referenceEnv, dir, name, err)
				break
			}
		}
	}
	if msg == "" {
		return dir
	}
	if slices.Contains(strings.Split(os.Getenv("RATH_REQUIRE"), ","), "mcp") {
		t.Fatalf("RATH_REQUIRE names mcp, but: %s", msg)
	}
	t.Skip(msg)
	return ""
}

// referenceEntry is the script a reference server runs.
func referenceEntry(dir, name string) string {
	return filepath.Join(dir, "node_modules", "@modelcontextprotocol", name, "dist", "index.js")
}

// referenceStdio is the config of a reference server over stdio.
func referenceStdio(dir, name string, args ...string) ServerConfig {
	return ServerConfig{
		Name:        strings.TrimPrefix(name, "server-"),
		Command:     append([]string{"node", referenceEntry(dir, name)}, args...),
		CallTimeout: 30 * time.Second,
	}
}

// everythingHTTP starts the reference "everything" server over streamable
// HTTP at addr and returns its process and its config.
func everythingHTTP(t *testing.T, dir, addr string) (*exec.Cmd, ServerConfig) {
	t.Helper()
	_, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command("node", referenceEntry(dir, "server-everything"), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	cmd.Dir = t.TempDir()
	startServer(t, cmd, addr)
	return cmd, ServerConfig{Name: "everything-http", URL: "http://" + addr + "/mcp", CallTimeout: 30 * time.Second}
}
