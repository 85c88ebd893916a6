//go:build k8s_pre136

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
)

type eventRecorderT = events.EventRecorder

// hookSchedulePod wraps Scheduler.SchedulePod (v1.35 and older: called with the pod).
func hookSchedulePod(sched *scheduler.Scheduler, after func(ctx context.Context, state cycleStateT, pod *v1.Pod, r *scheduler.ScheduleResult, err error)) {
	orig := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, f frameworkT, state cycleStateT, pod *v1.Pod) (scheduler.ScheduleResult, error) {
		result, err := orig(ctx, f, state, pod)
		after(ctx, state, pod, &result, err)
		return result, err
	}
}
