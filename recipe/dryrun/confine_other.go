//go:build !linux

package dryrun

import (
	"os/exec"
)

// confine has nothing to apply on this platform but the worker's empty
// environment: the interpreter's hermeticity and the sandbox's wall
// deadline bound its runs.
func confine(spy bool) (how, degraded string, err error) {
	return "empty environment", "resource limits, Landlock and seccomp: Linux only", nil
}

func workerAttrs(cmd *exec.Cmd) {}

func maxRSS(ps interface{ SysUsage() any }) int64 { return 0 }
