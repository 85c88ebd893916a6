//go:build !k8s_pre134

package main

// v1.34 and later: CycleState, Status and NodeInfo (an interface) live in the staging module
// k8s.io/kube-scheduler/framework; the scheduler has an API dispatcher to run.

import (
	"context"

	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
)

type (
	cycleStateT = fwk.CycleState
	statusT     = *fwk.Status
	nodeInfoT   = fwk.NodeInfo
)

const codeUnschedulableAndUnresolvable = fwk.UnschedulableAndUnresolvable

func startQueue(ctx context.Context, sched *scheduler.Scheduler) func() {
	logger := klog.FromContext(ctx)
	sched.SchedulingQueue.Run(logger)
	if sched.APIDispatcher != nil {
		sched.APIDispatcher.Run(logger)
	}
	return func() {
		if sched.APIDispatcher != nil {
			sched.APIDispatcher.Close()
		}
		sched.SchedulingQueue.Close()
	}
}
