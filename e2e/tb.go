package main

import (
	"fmt"
	"os"
	"sync"
)

// daemonTB implements ktesting.TB (k8s.io/kubernetes/test/utils/ktesting, an interface meant to be
// implemented outside the testing package) for a long-running process: logs go to stderr, cleanups run
// when the owner tears the server down, and a fatal error stops the process.
type daemonTB struct {
	name, tmp string

	mu       sync.Mutex
	cleanups []func()
	failed   bool
}

func newDaemonTB(name, tmp string) *daemonTB { return &daemonTB{name: name, tmp: tmp} }

func (t *daemonTB) runCleanups() {
	for {
		t.mu.Lock()
		n := len(t.cleanups)
		if n == 0 {
			t.mu.Unlock()
			return
		}
		f := t.cleanups[n-1]
		t.cleanups = t.cleanups[:n-1]
		t.mu.Unlock()
		f()
	}
}

func (t *daemonTB) log(s string) { fmt.Fprintf(os.Stderr, "[%s] %s\n", t.name, s) }

func (t *daemonTB) Attr(key, value string) {}
func (t *daemonTB) Chdir(dir string) {
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
}
func (t *daemonTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}
func (t *daemonTB) Error(args ...any) { t.log(fmt.Sprint(args...)); t.Fail() }
func (t *daemonTB) Errorf(format string, args ...any) {
	t.log(fmt.Sprintf(format, args...))
	t.Fail()
}
func (t *daemonTB) Fail() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
}
func (t *daemonTB) FailNow() {
	t.Fail()
	t.log("fatal error, exiting")
	os.Exit(1)
}
func (t *daemonTB) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}
func (t *daemonTB) Fatal(args ...any) { t.log(fmt.Sprint(args...)); t.FailNow() }
func (t *daemonTB) Fatalf(format string, args ...any) {
	t.log(fmt.Sprintf(format, args...))
	t.FailNow()
}
func (t *daemonTB) Helper()                          {}
func (t *daemonTB) Log(args ...any)                  { t.log(fmt.Sprint(args...)) }
func (t *daemonTB) Logf(format string, args ...any)  { t.log(fmt.Sprintf(format, args...)) }
func (t *daemonTB) Name() string                     { return t.name }
func (t *daemonTB) Setenv(key, value string)         { _ = os.Setenv(key, value) }
func (t *daemonTB) Skip(args ...any)                 { t.log(fmt.Sprint(args...)) }
func (t *daemonTB) Skipf(format string, args ...any) { t.log(fmt.Sprintf(format, args...)) }
func (t *daemonTB) SkipNow()                         {}
func (t *daemonTB) Skipped() bool                    { return false }
func (t *daemonTB) TempDir() string {
	d, err := os.MkdirTemp(t.tmp, "tb-")
	if err != nil {
		t.Fatal(err)
	}
	return d
}
