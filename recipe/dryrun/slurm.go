package dryrun

import (
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
)

// Slurm in the sandbox, as a multi-node launch path uses it: sbatch
// starts its job script at once (in a dry run a job starts when it is
// submitted), with the submitter's exported environment (--export=ALL,
// Slurm's default) and the job's variables; an srun inside that job runs
// its command once per task, with the task's SLURM_PROCID and node, so
// each node's servers are recorded. What only the cluster knows is
// unknown: the job id is JobID, and the nodes are named by their place
// (slurmNode): a name or address derived from them is not a guess of a
// machine's. An srun outside a job the dry run started runs its command
// once, as it always has (single-node launchers).

// JobID is the id a dry run's sbatch gives its job.
const JobID = UnknownMarker + "slurm.job_id>"

// maxTasks bounds the tasks of one srun and the nodes of one job.
const maxTasks = 64

// inJob marks a context whose commands run inside a job sbatch started.
type inJob struct{}

// inTask marks a context whose commands run as one task of an srun.
type inTask struct{}

// slurmNode names node i (from 0) of a dry run's job.
func slurmNode(i int) string { return "slurm-node-" + strconv.Itoa(i) }

// slurmBool are sbatch and srun options without a value.
var slurmBool = map[string]bool{"--parsable": true, "--exclusive": true, "--spread-job": true, "--hold": true,
	"--wait": true, "-W": true, "--requeue": true, "--no-requeue": true, "--overcommit": true, "-O": true,
	"--test-only": true, "--use-min-nodes": true, "--contiguous": true, "--unbuffered": true, "-u": true,
	"--overlap": true, "--exact": true, "--pty": true, "-l": true, "--label": true, "--no-kill": true, "-k": true,
	"--quiet": true, "-Q": true, "--verbose": true, "-v": true, "--kill-on-bad-exit": true, "-K": true}

// slurmArgs splits a Slurm command's options from what follows them
// (sbatch's script, srun's command): opts by name ("-N" and "--nodes"
// both kept as written).
func slurmArgs(args []string) (opts map[string]string, rest []string) {
	opts = map[string]string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			return opts, args[i:]
		}
		if a == "--" {
			return opts, args[i+1:]
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !hasVal && !slurmBool[a] && i+1 < len(args) {
			if len(a) > 2 && !strings.HasPrefix(a, "--") { // -N3
				name, val = a[:2], a[2:]
			} else {
				i++
				val = args[i]
			}
		}
		opts[name] = val
	}
	return opts, nil
}

// count reads a node or task count ("3", "2-4": its first number).
func count(v string) (int, bool) {
	v, _, _ = strings.Cut(v, "-")
	n, err := strconv.Atoi(strings.TrimSpace(v))
	return n, err == nil && n > 0
}

// nodeList reads a plain node list ("a,b,c"); ok is false for a range
// expression (node[1-3]) or an unknown value.
func nodeList(v string) ([]string, bool) {
	if v == "" || strings.ContainsAny(v, "[]") || strings.Contains(v, UnknownMarker) {
		return nil, false
	}
	var out []string
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out, len(out) > 0
}

// first is the first of the options set, by any of its names.
func first(opts map[string]string, names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := opts[n]; ok {
			return v, true
		}
	}
	return "", false
}

// sbatch runs `sbatch [options] SCRIPT [ARGS]`: the job script at once,
// in the submit directory (or --chdir), its output to where the job's
// would go (not the caller); it prints the job id as sbatch does. ok is
// false for what is not a submission of a script of the tree.
func (s *dryRun) sbatch(ctx context.Context, dir string, env expand.Environ, args []string) (bool, error) {
	if path.Base(args[0]) != "sbatch" {
		return false, nil
	}
	opts, rest := slurmArgs(args)
	if len(rest) == 0 {
		return false, nil // --wrap, or a script on stdin: stubbed
	}
	if _, ok := s.read(s.abs(dir, rest[0])); !ok {
		return false, nil
	}
	nodes := 1
	if v, ok := first(opts, "-N", "--nodes"); ok {
		if n, ok := count(v); ok {
			nodes = min(n, maxTasks)
		}
	}
	tasks := nodes
	if v, ok := first(opts, "-n", "--ntasks"); ok {
		if n, ok := count(v); ok {
			tasks = min(n, maxTasks)
		}
	}
	names := make([]string, nodes)
	for i := range names {
		names[i] = slurmNode(i)
	}
	list := strings.Join(names, ",")
	var pairs []string
	export, _ := first(opts, "--export")
	for i, kv := range strings.Split(export, ",") {
		switch {
		case i == 0 && (kv == "" || kv == "ALL"):
			pairs = exportedPairs(env)
		case i == 0 && kv == "NONE":
		case strings.Contains(kv, "="):
			pairs = append(pairs, kv)
		case i == 0: // a list of names: those of the caller's
			fallthrough
		default:
			if vr := env.Get(kv); vr.IsSet() {
				pairs = append(pairs, kv+"="+vr.String())
			}
		}
	}
	jobDir := dir
	if d, ok := first(opts, "-D", "--chdir"); ok {
		jobDir = s.abs(dir, d)
	}
	name, ok := first(opts, "-J", "--job-name")
	if !ok {
		name = path.Base(rest[0])
	}
	n := strconv.Itoa(nodes)
	pairs = append(pairs, "SLURM_JOB_ID="+JobID, "SLURM_JOBID="+JobID, "SLURM_JOB_NAME="+name,
		"SLURM_NNODES="+n, "SLURM_JOB_NUM_NODES="+n, "SLURM_NTASKS="+strconv.Itoa(tasks), "SLURM_NPROCS="+strconv.Itoa(tasks),
		"SLURM_JOB_NODELIST="+list, "SLURM_NODELIST="+list, "SLURM_SUBMIT_DIR="+dir, "SLURMD_NODENAME="+names[0],
		"SLURM_PROCID=0", "SLURM_NODEID=0", "SLURM_LOCALID=0")
	hc := interp.HandlerCtx(ctx)
	if _, parsable := opts["--parsable"]; parsable {
		fmt.Fprintln(hc.Stdout, JobID)
	} else {
		fmt.Fprintln(hc.Stdout, "Submitted batch job "+JobID)
	}
	// (the job's output goes to its --output file, not to the caller)
	jctx := context.WithValue(context.WithValue(ctx, inJob{}, true), stdoutKey{}, io.Writer(nil))
	err := s.runScript(jctx, jobDir, expand.ListEnviron(pairs...), rest[0], rest[1:])
	if _, isExit := interp.IsExitStatus(err); isExit {
		// the job failed; its submission did not (a run that stopped, at
		// a budget or at its client, stops here too)
		return true, nil
	}
	return true, err
}

// srunTasks says how many tasks an srun inside a dry run's job runs, and
// on which nodes: --nodelist, else -n/--ntasks, else -N/--nodes, else
// the job's tasks. ok is false outside such a job, inside a task, or for
// what is not srun.
func srunTasks(ctx context.Context, args []string, env expand.Environ) (nodes []string, ok bool) {
	if path.Base(args[0]) != "srun" || ctx.Value(inJob{}) == nil || ctx.Value(inTask{}) != nil {
		return nil, false
	}
	opts, rest := slurmArgs(args)
	if len(rest) == 0 {
		return nil, false
	}
	if v, ok := first(opts, "-w", "--nodelist"); ok {
		if l, ok := nodeList(v); ok {
			return l[:min(len(l), maxTasks)], true
		}
		return nil, false
	}
	n := 0
	if v, ok := first(opts, "-n", "--ntasks"); ok {
		n, _ = count(v)
	} else if v, ok := first(opts, "-N", "--nodes"); ok {
		n, _ = count(v)
	} else if c, ok := count(env.Get("SLURM_NTASKS").String()); ok {
		n = c
	}
	if n <= 0 {
		return nil, false
	}
	n = min(n, maxTasks)
	job, _ := nodeList(env.Get("SLURM_JOB_NODELIST").String())
	for i := range n {
		if i < len(job) {
			nodes = append(nodes, job[i])
		} else {
			nodes = append(nodes, slurmNode(i))
		}
	}
	return nodes, true
}

// srun runs the command of an srun inside a dry run's job once per
// task, the last task first: task 0 of a multi-node job is the node that
// starts the benchmark client, and a dry run ends at its client, so the
// other nodes' servers are recorded before it. Each task gets its
// SLURM_PROCID, SLURM_NODEID and node name.
func (s *dryRun) srun(ctx context.Context, dir string, env expand.Environ, args []string, nodes []string) error {
	var failed error
	for i := len(nodes) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		tenv := withEnv(env, []string{"SLURM_PROCID=" + strconv.Itoa(i), "SLURM_NODEID=" + strconv.Itoa(i),
			"SLURM_LOCALID=0", "SLURMD_NODENAME=" + nodes[i], "SLURM_STEP_NUM_TASKS=" + strconv.Itoa(len(nodes))})
		err := s.exec(context.WithValue(ctx, inTask{}, true), dir, tenv, args)
		if _, isExit := interp.IsExitStatus(err); err != nil && !isExit {
			return err
		}
		if err != nil && failed == nil {
			failed = err
		}
	}
	return failed
}
