package cluster_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"testing"
)

// pgServer is a PostgreSQL server of the test's own, which it can stop and
// start again (the fault drills).
type pgServer struct {
	t    *testing.T
	bin  string
	dir  string
	port int
	as   string // the unprivileged user that owns it, when the test runs as root
}

// ownPostgres initialises and starts a server in a temporary directory on
// a free loopback port, stopped when the test ends.
func ownPostgres(t *testing.T) *pgServer {
	t.Helper()
	if os.Getenv("RATH_TEST_POSTGRES") == "" {
		t.Skip("RATH_TEST_POSTGRES is not set: no PostgreSQL for the fault drills (./scripts/test provides one)")
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	s := &pgServer{t: t}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			s.bin = d
			break
		}
	}
	if s.bin == "" {
		if p, err := exec.LookPath("pg_ctl"); err == nil {
			s.bin = filepath.Dir(p)
		} else {
			t.Fatal("the fault drills need PostgreSQL's initdb and pg_ctl")
		}
	}
	dir, err := os.MkdirTemp("", "rath-pg-")
	if err != nil {
		t.Fatal(err)
	}
	s.dir = dir
	t.Cleanup(func() {
		s.ctl("stop", "-m", "immediate")
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		s.as = "postgres"
		u, err := user.Lookup(s.as)
		if err != nil {
			t.Fatalf("running as root, the drills need the postgres user: %v", err)
		}
		var uid, gid int
		fmt.Sscan(u.Uid, &uid)
		fmt.Sscan(u.Gid, &gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	if out, err := s.cmd(filepath.Join(s.bin, "initdb"), "--no-sync", "-A", "trust", "-U", "postgres", "-D", filepath.Join(dir, "data")).CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s.start()
	return s
}

func (s *pgServer) cmd(name string, args ...string) *exec.Cmd {
	if s.as != "" {
		return exec.Command("runuser", append([]string{"-u", s.as, "--", name}, args...)...)
	}
	return exec.Command(name, args...)
}

func (s *pgServer) ctl(args ...string) ([]byte, error) {
	return s.cmd(filepath.Join(s.bin, "pg_ctl"), append([]string{"-D", filepath.Join(s.dir, "data"), "-w"}, args...)...).CombinedOutput()
}

func (s *pgServer) start() {
	s.t.Helper()
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c max_connections=200", s.port, s.dir)
	if out, err := s.ctl("start", "-l", filepath.Join(s.dir, "log"), "-o", opts); err != nil {
		s.t.Fatalf("pg_ctl start: %v\n%s", err, out)
	}
}

func (s *pgServer) stop() {
	s.t.Helper()
	if out, err := s.ctl("stop", "-m", "immediate"); err != nil {
		s.t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

func (s *pgServer) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}
