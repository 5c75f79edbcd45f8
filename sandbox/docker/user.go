package docker

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
)

// SandboxUID and SandboxGID are the user commands run as when rath runs as
// root and the workspace directory belongs to root.
const (
	SandboxUID = 1000
	SandboxGID = 1000
)

// user is who commands run as. When handOver is set (rath runs as root),
// files rath creates in the workspace are given to that user, so commands
// can change them; otherwise rath and the commands are the same user and
// nothing needs doing.
type user struct {
	uid, gid int
	handOver bool
}

func (u user) String() string { return strconv.Itoa(u.uid) + ":" + strconv.Itoa(u.gid) }

// userFor picks the user for a new container on the workspace dir: the
// user running rath; as root, the directory's owner, or SandboxUID when
// root owns it — then the tree is handed over to that user.
func userFor(dir string) (user, error) {
	if uid := os.Getuid(); uid != 0 {
		return user{uid: uid, gid: os.Getgid()}, nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return user{}, fmt.Errorf("docker: workspace %s: %w", dir, err)
	}
	u := user{uid: SandboxUID, gid: SandboxGID, handOver: true}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid != 0 {
		u.uid, u.gid = int(sys.Uid), int(sys.Gid)
	}
	return u, u.handOverTree(dir)
}

// parseUser reads a container's LabelUser back.
func parseUser(s string) (user, error) {
	a, b, ok := strings.Cut(s, ":")
	uid, err1 := strconv.Atoi(a)
	gid, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || uid == 0 {
		return user{}, fmt.Errorf("container user %q is not a non-root uid:gid", s)
	}
	return user{uid: uid, gid: gid, handOver: os.Getuid() == 0}, nil
}

// handOverTree gives everything root owns in dir to the user. It runs only
// while no container uses dir, and works through os.Root, so it never
// touches anything outside dir.
func (u user) handOverTree(dir string) error {
	if !u.handOver {
		return nil
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("docker: workspace %s: %w", dir, err)
	}
	defer r.Close()
	err = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return u.handOver1(r, p)
	})
	if err != nil {
		return fmt.Errorf("docker: handing workspace %s to uid %d: %w", dir, u.uid, err)
	}
	return nil
}

// handOverPath gives name and each of its parent directories, if root
// owns them, to the user.
func (u user) handOverPath(r *os.Root, name string) error {
	if !u.handOver {
		return nil
	}
	for p := name; ; p = path.Dir(p) {
		if err := u.handOver1(r, p); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
	}
}

// handOver1 changes one entry's owner (not following a symlink) if root
// owns it.
func (u user) handOver1(r *os.Root, name string) error {
	st, err := r.Lstat(name)
	if err != nil {
		return err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid == 0 {
		return r.Lchown(name, u.uid, u.gid)
	}
	return nil
}
