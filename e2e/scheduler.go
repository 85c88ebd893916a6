package main

import (
	"context"

	"github.com/spf13/pflag"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

// startScheduler runs the real kube-scheduler in this process with its default profile, as the
// kube-scheduler binary does (options.NewOptions, app.Setup, app.Run), authenticated as
// system:kube-scheduler (its bootstrap RBAC roles). It serves no port and does not elect a leader.
func startScheduler(ctx context.Context, kubeconfig string) (stop func(), err error) {
	opts := options.NewOptions()
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse([]string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	}); err != nil {
		return nil, err
	}
	if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	cc, sched, err := app.Setup(ctx, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cc, sched) }()
	return func() {
		cancel()
		<-done
	}, nil
}
