//go:build k8s_pre134

package main

// v1.31-v1.33: CycleState, Status and NodeInfo (a struct) are k8s.io/kubernetes/pkg/scheduler/framework's;
// there is no API dispatcher.

import (
	"context"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

type (
	cycleStateT = *framework.CycleState
	statusT     = *framework.Status
	nodeInfoT   = *framework.NodeInfo
)

const codeUnschedulableAndUnresolvable = framework.UnschedulableAndUnresolvable

func startQueue(ctx context.Context, sched *scheduler.Scheduler) func() {
	sched.SchedulingQueue.Run(klog.FromContext(ctx))
	return sched.SchedulingQueue.Close
}
