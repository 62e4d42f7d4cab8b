//go:build linux

package dryrun

import (
	"fmt"
	"os/exec"
	"runtime/debug"
	"strings"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// Limits of a worker process: its address space (a run's memory budget
// is 1 GiB by default; the runtime needs room beside it), open files,
// threads, CPU seconds over its life (a worker serves many jobs; each is
// bounded by its wall time), and no file it may write or core it may
// dump.
const (
	workerAddressSpace = 4 << 30
	workerFiles        = 4 * maxProcesses // pipes: two files each
	workerThreads      = 64
	workerCPUSeconds   = 3600
)

// confine applies the worker's confinement to this process: resource
// limits, Landlock (no file-system access at all, no TCP, no signals or
// abstract sockets out of the process) and a seccomp filter that refuses
// the system calls a worker never needs (opening, creating, inspecting
// or removing files, executing programs, sockets, ptrace). With spy, the
// filter kills the worker on those calls instead, with a stack trace.
// It returns how the worker is confined and what the kernel lacked.
func confine(spy bool) (how, degraded string, err error) {
	for _, l := range []struct {
		res int
		max uint64
	}{
		{unix.RLIMIT_AS, workerAddressSpace},
		{unix.RLIMIT_NOFILE, workerFiles},
		{unix.RLIMIT_FSIZE, 0},
		{unix.RLIMIT_CORE, 0},
		{unix.RLIMIT_CPU, workerCPUSeconds},
	} {
		lim := unix.Rlimit{Cur: l.max, Max: l.max}
		if err := unix.Setrlimit(l.res, &lim); err != nil {
			return "", "", fmt.Errorf("setrlimit %d: %w", l.res, err)
		}
	}
	debug.SetMaxThreads(workerThreads)
	var parts, lacks []string
	parts = append(parts, "empty environment", "resource limits")
	if err := landlock.V11.BestEffort().Restrict(); err != nil {
		lacks = append(lacks, "Landlock: "+err.Error())
	} else if abi := landlockABI(); abi > 0 {
		parts = append(parts, fmt.Sprintf("Landlock ABI %d", abi))
	} else {
		lacks = append(lacks, "Landlock: the kernel lacks it")
	}
	action := seccomp.ActionErrno
	if spy {
		action = seccomp.ActionTrap
	}
	info, err := arch.GetInfo("")
	if err != nil {
		lacks = append(lacks, "seccomp: "+err.Error())
	} else {
		var names []string
		for _, n := range refusedSyscalls {
			if _, ok := info.SyscallNames[n]; ok {
				names = append(names, n)
			}
		}
		f := seccomp.Filter{NoNewPrivs: true, Flag: seccomp.FilterFlagTSync, Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls:      []seccomp.SyscallGroup{{Action: action, Names: names}},
		}}
		if err := seccomp.LoadFilter(f); err != nil {
			if spy {
				return "", "", fmt.Errorf("seccomp: %w", err)
			}
			lacks = append(lacks, "seccomp: "+err.Error())
		} else {
			parts = append(parts, fmt.Sprintf("seccomp (%d system calls refused)", len(names)))
		}
	}
	return strings.Join(parts, ", "), strings.Join(lacks, "; "), nil
}

// landlockABI is the kernel's Landlock ABI version (0: none).
func landlockABI() int {
	v, _, e := syscall.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1) // LANDLOCK_CREATE_RULESET_VERSION
	if e != 0 {
		return 0
	}
	return int(v)
}

// refusedSyscalls are what a worker never calls once confined: it reads
// and writes the pipes it was started with, and nothing else of the
// machine (names a platform lacks are skipped).
var refusedSyscalls = []string{
	// files: open, create, inspect, change, remove
	"open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at",
	"stat", "lstat", "newfstatat", "statx", "statfs", "fstatat64", "stat64", "lstat64",
	"access", "faccessat", "faccessat2", "readlink", "readlinkat", "getdents", "getdents64",
	"mkdir", "mkdirat", "mknod", "mknodat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
	"link", "linkat", "symlink", "symlinkat", "chmod", "fchmodat", "fchmodat2", "chown", "lchown", "fchownat",
	"truncate", "utime", "utimes", "utimensat", "futimesat", "chdir", "chroot", "mount", "umount2",
	"pivot_root", "setxattr", "lsetxattr", "getxattr", "lgetxattr", "listxattr", "llistxattr",
	"inotify_add_watch", "fanotify_mark", "memfd_create", "memfd_secret",
	// programs, processes, the network
	"execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
	"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
}

// workerAttrs make a worker die with perflog.
func workerAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// maxRSS is the largest resident size a finished process reached.
func maxRSS(ps interface{ SysUsage() any }) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}
