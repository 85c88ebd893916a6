package main

// The recording framework and the scheduler hooks, on the framework types of fwapi_*.go (CycleState,
// Status and NodeInfo: k8s.io/kube-scheduler/framework from v1.34, k8s.io/kubernetes/pkg/scheduler/framework
// before; the FitError statuses: nodestatus_*.go).

import (
	"context"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

type (
	frameworkT     = framework.Framework
	queuedPodInfoT = *framework.QueuedPodInfo
)

// logRecorder implements events.EventRecorder (and EventRecorderLogger) by writing to an eventLog.
type logRecorder struct{ log *eventLog }

func (r logRecorder) Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	r.log.add(regarding, eventtype, reason, action, note, args...)
}

func (r logRecorder) WithLogger(klog.Logger) events.EventRecorderLogger { return r }

func recorderFor(l *eventLog) eventRecorderT { return logRecorder{log: l} }

func toStatus(st statusT) *status {
	reasons := []string{}
	if st != nil && st.Reasons() != nil {
		reasons = append(reasons, st.Reasons()...)
	}
	if st == nil {
		return &status{Plugin: "", Code: "Success", Reasons: reasons}
	}
	return &status{Plugin: st.Plugin(), Code: st.Code().String(), Reasons: reasons}
}

// recordingFramework is the profile's real framework with the scheduling cycle's extension points
// observed on the way through; every call is passed on unchanged.
type recordingFramework struct {
	framework.Framework
	rec *recorder
}

func wrapFramework(f framework.Framework, rec *recorder) framework.Framework {
	return &recordingFramework{Framework: f, rec: rec}
}

func (w *recordingFramework) RunPreFilterPlugins(ctx context.Context, state cycleStateT, pod *v1.Pod) (*preFilterResultT, statusT, sets.Set[string]) {
	res, st, unsched := w.Framework.RunPreFilterPlugins(ctx, state, pod)
	w.rec.mu.Lock()
	defer w.rec.mu.Unlock()
	if !st.IsSuccess() {
		w.rec.prefilter = toStatus(st)
	}
	if !res.AllNodes() {
		w.rec.prefilterNodes = sets.List(res.NodeNames)
		w.rec.prefilterRestricts = true
	}
	w.rec.unschedPlugins = sets.List(unsched)
	if nodes, err := w.SnapshotSharedLister().NodeInfos().List(); err == nil {
		w.rec.allNodes = nil
		for _, n := range nodes {
			w.rec.allNodes = append(w.rec.allNodes, n.Node().Name)
		}
		sort.Strings(w.rec.allNodes)
	}
	return res, st, unsched
}

func (w *recordingFramework) RunFilterPluginsWithNominatedPods(ctx context.Context, state cycleStateT, pod *v1.Pod, info nodeInfoT) statusT {
	st := w.Framework.RunFilterPluginsWithNominatedPods(ctx, state, pod, info)
	w.rec.mu.Lock()
	defer w.rec.mu.Unlock()
	if st.IsSuccess() {
		w.rec.filters[info.Node().Name] = nil
		if info.Node().Name == pod.Status.NominatedNodeName {
			w.rec.nominatedFits = true
		}
	} else {
		w.rec.filters[info.Node().Name] = toStatus(st)
		if info.Node().Name == pod.Status.NominatedNodeName && st.Plugin() != "" && st.IsRejected() {
			w.rec.nominatedRejectedBy = st.Plugin()
		}
	}
	return st
}

func (w *recordingFramework) RunScorePlugins(ctx context.Context, state cycleStateT, pod *v1.Pod, nodes []nodeInfoT) ([]nodePluginScoresT, statusT) {
	scores, st := w.Framework.RunScorePlugins(ctx, state, pod, nodes)
	w.rec.recordScores(w.Framework, scores)
	return scores, st
}

func (w *recordingFramework) RunPostFilterPlugins(ctx context.Context, state cycleStateT, pod *v1.Pod, m nodeToStatusReaderT) (*postFilterResultT, statusT) {
	res, st := w.Framework.RunPostFilterPlugins(ctx, state, pod, m)
	w.rec.mu.Lock()
	w.rec.postfilter = toStatus(st)
	w.rec.mu.Unlock()
	return res, st
}

func (r *recorder) recordScores(f framework.Framework, scores []nodePluginScoresT) {
	weights := scoreWeights(f)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ns := range scores {
		s := &nodeScore{Plugins: map[string]scoreEntry{}, Total: ns.TotalScore}
		for _, ps := range ns.Scores {
			w := weights[ps.Name]
			norm := ps.Score
			if w != 0 {
				norm = ps.Score / w
			}
			s.Plugins[ps.Name] = scoreEntry{Score: norm, Weight: w, Weighted: ps.Score}
		}
		r.scores[ns.Name] = s
	}
}

// scoreAlone scores the only feasible node, as the scheduler would have with a second one, on a clone
// of the cycle state so the binding cycle sees exactly what the scheduler left.
func (r *recorder) scoreAlone(ctx context.Context, f framework.Framework, state cycleStateT, pod *v1.Pod, node string) {
	ni, err := f.SnapshotSharedLister().NodeInfos().Get(node)
	if err != nil {
		return
	}
	clone := state.Clone()
	nodes := []nodeInfoT{ni}
	if st := f.RunPreScorePlugins(ctx, clone, pod, nodes); !st.IsSuccess() {
		return
	}
	if !f.HasScorePlugins() {
		return
	}
	scores, st := f.RunScorePlugins(ctx, clone, pod, nodes)
	if st.IsSuccess() {
		r.recordScores(f, scores)
	}
}

func scoreWeights(f framework.Framework) map[string]int64 {
	out := map[string]int64{}
	if p := f.ListPlugins(); p != nil {
		for _, pl := range p.Score.Enabled {
			out[pl.Name] = int64(pl.Weight)
		}
	}
	return out
}

func runPreEnqueue(ctx context.Context, f framework.Framework, pod *v1.Pod) *status {
	for _, pl := range f.PreEnqueuePlugins() {
		st := pl.PreEnqueue(ctx, pod)
		if st.IsSuccess() {
			continue
		}
		st.SetPlugin(pl.Name())
		return toStatus(st)
	}
	return nil
}

func activate(ctx context.Context, sched *scheduler.Scheduler, pod *v1.Pod) {
	sched.SchedulingQueue.Activate(klog.FromContext(ctx), map[string]*v1.Pod{pod.Namespace + "/" + pod.Name: pod})
}
