//go:build !k8s_pre136

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
)

type eventRecorderT = events.EventRecorderLogger

// hookSchedulePod wraps Scheduler.SchedulePod (v1.36 and later: called with the QueuedPodInfo).
func hookSchedulePod(sched *scheduler.Scheduler, after func(ctx context.Context, state cycleStateT, pod *v1.Pod, r *scheduler.ScheduleResult, err error)) {
	orig := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, f frameworkT, state cycleStateT, podInfo queuedPodInfoT) (scheduler.ScheduleResult, error) {
		result, err := orig(ctx, f, state, podInfo)
		after(ctx, state, podInfo.Pod, &result, err)
		return result, err
	}
}
