// Command e2e-cluster runs, on loopback and in one process, an embedded etcd, a real kube-apiserver (and
// optionally a real kube-scheduler) at the k8s.io/kubernetes release this module is built against; loads a
// scenario file through the API as a cluster would hold it; writes a kubeconfig with one context per test
// user; prints "ready" and serves until SIGTERM/SIGINT or EOF on stdin.
//
// It only calls upstream's exported API: go.etcd.io/etcd/server/v3/embed, the test-server helper that
// Kubernetes' integration tests use (k8s.io/kubernetes/cmd/kube-apiserver/app/testing), and
// k8s.io/kubernetes/cmd/kube-scheduler/app (Setup + Run, what the kube-scheduler binary does).
//
// stdin commands (one per line, answered "ok <command>" or "error <command>: ..." on stdout), used by the
// tests to take the API server away mid-list:
//
//	stop-apiserver   tear the API server down (the port stops accepting connections)
//	start-apiserver  start a new API server on the same port, same etcd, same flags
//	compact          compact etcd at its current revision (outstanding continue tokens expire)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/component-base/version"
)

type clusterOptions struct {
	scenario     string
	out          string
	scheduler    bool
	devNamespace string
}

func main() {
	var o clusterOptions
	flag.StringVar(&o.scenario, "scenario", "", "scenario YAML (the format of fixtures/golden*/) to load; empty: an empty cluster")
	flag.StringVar(&o.out, "out", "", "directory for kubeconfig, audit.log, tokens.csv, info.json (required)")
	flag.BoolVar(&o.scheduler, "scheduler", false, "also run the real kube-scheduler (default profile) against the API server")
	flag.StringVar(&o.devNamespace, "developer-namespace", "default", "the namespace the developer user may read")
	flag.Parse()
	if o.out == "" {
		fmt.Fprintln(os.Stderr, "e2e-cluster: --out is required")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "e2e-cluster: %v\n", err)
		os.Exit(1)
	}
}

func run(o clusterOptions) (err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "kdiagnose-e2e-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	objs, err := readScenario(o.scenario)
	if err != nil {
		return err
	}
	creds, err := writeCredentials(out)
	if err != nil {
		return err
	}

	etcd, err := startEtcd(filepath.Join(work, "etcd"))
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer etcd.stop()

	cl, err := newCluster(out, work, etcd, creds)
	if err != nil {
		return err
	}
	defer cl.stop()
	if err := cl.start(); err != nil {
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	if err := writeKubeconfigs(out, cl.server(), creds, o.devNamespace); err != nil {
		return err
	}

	admin, err := cl.client(creds.admin, "kdiagnose-e2e-loader")
	if err != nil {
		return err
	}
	if err := setupRBAC(ctx, admin, o.devNamespace); err != nil {
		return fmt.Errorf("rbac: %w", err)
	}
	loaded, err := loadScenario(ctx, admin, objs, !o.scheduler)
	if err != nil {
		return fmt.Errorf("loading %s: %w", o.scenario, err)
	}

	if o.scheduler {
		stopSched, err := startScheduler(ctx, filepath.Join(out, "scheduler.kubeconfig"))
		if err != nil {
			return fmt.Errorf("kube-scheduler: %w", err)
		}
		defer stopSched()
		if err := waitScheduled(ctx, admin, objs, 90*time.Second); err != nil {
			return err
		}
	}

	info := map[string]any{
		"server":      cl.server(),
		"kubeconfig":  filepath.Join(out, "kubeconfig"),
		"audit_log":   filepath.Join(out, "audit.log"),
		"git_version": version.Get().GitVersion,
		"scheduler":   o.scheduler,
		"loaded":      loaded,
		"pid":         os.Getpid(),
	}
	data, _ := json.MarshalIndent(info, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "info.json"), data, 0o644); err != nil {
		return err
	}
	fmt.Println("ready")

	return serve(ctx, cl)
}

// serve answers stdin commands until a signal or EOF on stdin.
func serve(ctx context.Context, cl *cluster) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- strings.TrimSpace(sc.Text())
		}
	}()
	for {
		select {
		case <-sigs:
			return nil
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				return nil
			}
			var err error
			switch line {
			case "":
				continue
			case "stop-apiserver":
				cl.stopAPIServer()
			case "start-apiserver":
				err = cl.start()
			case "compact":
				err = cl.compact(ctx)
			default:
				err = fmt.Errorf("unknown command")
			}
			if err != nil {
				fmt.Printf("error %s: %v\n", line, err)
			} else {
				fmt.Printf("ok %s\n", line)
			}
		}
	}
}

// waitFor polls cond every 100ms until it holds or the timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}
