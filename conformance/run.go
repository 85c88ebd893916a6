package main

// Running the real kube-scheduler on one pending pod: a fresh fake API server (clientset) holding the
// cluster and that pod alone, the scheduler built by scheduler.New from the configuration, its informers
// synced, then one real ScheduleOne. What happened is recorded through exported hooks only: the profile
// frameworks are wrapped (recordingFramework, fw_*.go) to see PreFilter, Filter, Score and PostFilter
// results, Scheduler.SchedulePod is wrapped to break score ties by lowest node name, FailureHandler to
// see the status, and the event recorder keeps the events.

import (
	"context"
	"fmt"

	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// event is one event the scheduler emitted.
type event struct {
	Regarding string `json:"regarding"`
	Type      string `json:"type"`
	Reason    string `json:"reason"`
	Action    string `json:"action"`
	Note      string `json:"note"`
}

// eventLog records events synchronously (the real broadcaster is asynchronous and rate-limited).
type eventLog struct {
	mu     sync.Mutex
	events []event
	bump   chan struct{}
}

func (l *eventLog) add(regarding runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	name := ""
	if m, err := meta.Accessor(regarding); err == nil {
		name = m.GetNamespace() + "/" + m.GetName()
		if m.GetNamespace() == "" {
			name = m.GetName()
		}
	}
	l.mu.Lock()
	l.events = append(l.events, event{Regarding: name, Type: eventtype, Reason: reason, Action: action,
		Note: fmt.Sprintf(note, args...)})
	l.mu.Unlock()
	select {
	case l.bump <- struct{}{}:
	default:
	}
}

func (l *eventLog) snapshot() []event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]event(nil), l.events...)
}

// status is the JSON form of a framework Status.
type status struct {
	Plugin  string   `json:"plugin"`
	Code    string   `json:"code"`
	Reasons []string `json:"reasons"`
}

type scoreEntry struct {
	Score    int64 `json:"score"`
	Weight   int64 `json:"weight"`
	Weighted int64 `json:"weighted"`
}

type nodeScore struct {
	Plugins map[string]scoreEntry `json:"plugins"`
	Total   int64                 `json:"total"`
}

type preemption struct {
	NominatedNode string   `json:"nominated_node"`
	Victims       []string `json:"victims"`
}

// podResult is one entry of "pods"; field order as in fixtures/golden.
type podResult struct {
	Pod                string                `json:"pod"`
	Profile            *string               `json:"profile,omitempty"`
	Handled            *bool                 `json:"handled,omitempty"`
	NotHandled         *string               `json:"not_handled,omitempty"`
	Scheduled          bool                  `json:"scheduled"`
	Node               *string               `json:"node"`
	TopNodes           []string              `json:"top_nodes"`
	TieBreak           *string               `json:"tie_break,omitempty"`
	FeasibleNodes      []string              `json:"feasible_nodes"`
	Message            *string               `json:"message"`
	Attempted          bool                  `json:"attempted"`
	PreEnqueueRejected *status               `json:"preenqueue_rejected"`
	PreFilter          *status               `json:"prefilter"`
	PreFilterNodeNames []string              `json:"prefilter_node_names"`
	Filters            map[string]any        `json:"filters"`
	Scores             map[string]*nodeScore `json:"scores"`
	ScoredByScheduler  bool                  `json:"scored_by_scheduler"`
	ScoreWeights       map[string]int64      `json:"score_weights"`
	PostFilter         *status               `json:"postfilter"`
	Preemption         *preemption           `json:"preemption"`
	Events             []event               `json:"events"`
	Error              *string               `json:"error"`
	BindingError       *string               `json:"binding_error,omitempty"`
}

// writeRecorder: writes by the scheduler (binding, PreBind volume and claim updates, status patches,
// preemption deletions) are accepted and answered with the stored object, but never applied, so that
// the PreBind checks fail as they do without the controllers. One exception: an object created with
// generateName (the ResourceClaim DynamicResources creates for extended resources a DeviceClass maps,
// v1.36+) is stored under a generated name, as the API server would, because PreBind then waits (up to
// two minutes) for its informer to see it. Each pod runs on a fresh clientset, so no other pod sees it.
func installWriteReactors(client *fake.Clientset) {
	tracker := client.Tracker()
	client.PrependReactor("*", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		switch action.GetVerb() {
		case "create":
			if action.GetSubresource() != "" {
				return true, nil, nil // pods/binding
			}
			if a, ok := action.(clienttesting.CreateAction); ok {
				obj := a.GetObject()
				if m, err := meta.Accessor(obj); err == nil && m.GetName() == "" && m.GetGenerateName() != "" {
					obj = obj.DeepCopyObject()
					m, _ = meta.Accessor(obj)
					m.SetName(m.GetGenerateName() + nameSuffix(action.GetNamespace()+"/"+m.GetGenerateName()))
					m.SetUID(deterministicUID(action.GetResource().Resource, action.GetNamespace(), m.GetName()))
					m.SetResourceVersion("1000000")
					if err := tracker.Create(action.GetResource(), obj, action.GetNamespace()); err != nil {
						return true, nil, err
					}
				}
				return true, obj, nil
			}
		case "update":
			if a, ok := action.(clienttesting.UpdateAction); ok {
				m, err := meta.Accessor(a.GetObject())
				if err != nil {
					return true, a.GetObject(), nil
				}
				stored, err := tracker.Get(action.GetResource(), action.GetNamespace(), m.GetName())
				return true, stored, err
			}
		case "patch":
			if a, ok := action.(clienttesting.PatchAction); ok {
				stored, err := tracker.Get(action.GetResource(), action.GetNamespace(), a.GetName())
				return true, stored, err
			}
		case "delete", "delete-collection":
			return true, nil, nil
		}
		return false, nil, nil
	})
}

var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// schedulePod runs the real scheduler on one pending pod of the scenario.
func schedulePod(parent context.Context, sc *scenario, cfg *schedulerapi.KubeSchedulerConfiguration, pod *v1.Pod) (*podResult, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	ctx = klog.NewContext(ctx, klog.Background())

	objs := append([]runtime.Object{}, sc.objects...)
	for _, p := range sc.bound {
		objs = append(objs, p.DeepCopy())
	}
	objs = append(objs, sc.claimsOf[pod.UID]...)
	objs = append(objs, pod.DeepCopy())
	client := fake.NewSimpleClientset(objs...)
	installWriteReactors(client)

	events := &eventLog{bump: make(chan struct{}, 1)}
	informerFactory := newInformerFactory(client)
	rec := newRecorder()
	sched, err := scheduler.New(ctx, client, informerFactory, nil,
		func(string) eventRecorderT { return recorderFor(events) },
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
	)
	if err != nil {
		return nil, err
	}
	res := &podResult{Pod: pod.Namespace + "/" + pod.Name, TopNodes: []string{}, FeasibleNodes: []string{},
		Filters: map[string]any{}, Scores: map[string]*nodeScore{}, ScoreWeights: map[string]int64{}, Events: []event{}}

	profileName := pod.Spec.SchedulerName
	if _, ok := sched.Profiles[profileName]; !ok {
		return nil, errNotHandled
	}
	inner := sched.Profiles[profileName]
	sched.Profiles[profileName] = wrapFramework(inner, rec)
	res.ScoreWeights = scoreWeights(inner)

	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return nil, err
	}
	defer startQueue(ctx, sched)()

	// PreEnqueue: a rejected pod never leaves the scheduling queue's unschedulable pool, so there is no
	// attempt and no event. The same plugins the queue runs are asked in the same order.
	// Plugins whose state comes from informers (DynamicResources' claim cache) may not have seen their
	// objects yet: ask again for a while before taking a rejection as final.
	var st *status
	for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st = runPreEnqueue(ctx, inner, pod); st == nil || time.Now().After(deadline) {
			break
		}
	}
	if st != nil {
		res.PreEnqueueRejected = st
		return res, nil
	}
	res.Attempted = true
	// The queue may have run PreEnqueue before those caches were filled; move the pod to activeQ.
	activate(ctx, sched, pod)

	hookSchedulePod(sched, func(ctx context.Context, state cycleStateT, p *v1.Pod, result *scheduler.ScheduleResult, err error) {
		if err != nil {
			rec.mu.Lock()
			rec.fitErrorStatuses(err)
			rec.mu.Unlock()
			return
		}
		if result.FeasibleNodes == 1 {
			// The scheduler skips scoring with one feasible node; score it anyway, on a copy of the state.
			rec.scoreAlone(ctx, inner, state, p, result.SuggestedHost)
		}
		if top := rec.topNodes(); len(top) > 0 && top[0] != result.SuggestedHost {
			result.SuggestedHost = top[0] // ties broken by lowest node name instead of at random
		}
		rec.mu.Lock()
		rec.suggested = result.SuggestedHost
		rec.mu.Unlock()
	})
	type failure struct {
		status     statusT
		nominating string
		binding    bool
	}
	failures := make(chan failure, 2)
	scheduling := true
	var schedMu sync.Mutex
	origFailure := sched.FailureHandler
	sched.FailureHandler = func(ctx context.Context, f frameworkT, podInfo queuedPodInfoT, st statusT, nominatingInfo nominatingInfoT, start time.Time) {
		schedMu.Lock()
		inCycle := scheduling
		schedMu.Unlock()
		nominated := ""
		if nominatingInfo != nil {
			nominated = nominatingInfo.NominatedNodeName
		}
		if inCycle {
			origFailure(ctx, f, podInfo, st, nominatingInfo, start)
		}
		failures <- failure{status: st, nominating: nominated, binding: !inCycle}
	}

	done := make(chan struct{})
	go func() { sched.ScheduleOne(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		pods, summary := sched.SchedulingQueue.PendingPods()
		return nil, fmt.Errorf("the scheduling queue never released the pod (%d pending: %s)", len(pods), summary)
	}
	schedMu.Lock()
	scheduling = false
	schedMu.Unlock()

	var fail *failure
	select {
	case f := <-failures:
		fail = &f
	default:
		// The scheduling cycle succeeded: wait for the binding cycle (a Scheduled event or a failure).
		deadline := time.After(60 * time.Second)
	wait:
		for {
			for _, e := range events.snapshot() {
				if e.Reason == "Scheduled" {
					break wait
				}
			}
			select {
			case f := <-failures:
				fail = &f
				break wait
			case <-events.bump:
			case <-time.After(20 * time.Millisecond):
			case <-deadline:
				return nil, fmt.Errorf("binding cycle of %s did not finish", res.Pod)
			}
		}
	}

	rec.fill(res, inner, fail != nil && !fail.binding)
	if fail != nil && fail.binding {
		msg := fail.status.AsError().Error()
		res.BindingError = &msg
	}
	if fail == nil || fail.binding {
		res.Scheduled = true
		node := rec.suggested
		res.Node = &node
	} else {
		st := fail.status
		if st.Code().String() == "Error" {
			e := st.AsError().Error()
			res.Error = &e
		}
		if fail.nominating != "" {
			res.Preemption = &preemption{NominatedNode: fail.nominating, Victims: []string{}}
			waitQuiet(events)
		}
	}
	evs := events.snapshot()
	var own, preempted []event
	for _, e := range evs {
		if e.Reason == "Preempted" {
			preempted = append(preempted, e)
		} else if e.Regarding == res.Pod {
			own = append(own, e)
		}
	}
	sort.SliceStable(preempted, func(i, j int) bool { return preempted[i].Regarding < preempted[j].Regarding })
	res.Events = append(append([]event{}, own...), preempted...)
	for _, e := range own {
		if e.Reason == "FailedScheduling" {
			m := e.Note
			res.Message = &m
		}
	}
	if res.Preemption != nil {
		for _, e := range preempted {
			res.Preemption.Victims = append(res.Preemption.Victims, e.Regarding)
		}
	}
	return res, nil
}

// waitQuiet waits until asynchronous preemption has emitted its events (no new event for 300 ms).
func waitQuiet(events *eventLog) {
	n := len(events.snapshot())
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-events.bump:
		case <-time.After(300 * time.Millisecond):
			if m := len(events.snapshot()); m == n {
				return
			} else {
				n = m
			}
		}
	}
}

var errNotHandled = fmt.Errorf("no profile")

// recorder collects what the wrapped framework saw during the scheduling cycle.
type recorder struct {
	mu                 sync.Mutex
	prefilter          *status
	prefilterNodes     []string
	unschedPlugins     []string
	prefilterRestricts bool
	// nominatedRejectedBy is the plugin that rejected the pod's nominated node. findNodesThatFitPod
	// (schedule_one.go, v1.32+) formats the absent nodes' "didn't satisfy plugin(s) [...]" after
	// evaluateNominatedNode, whose copy of the Diagnosis shares the UnschedulablePlugins set PreFilter
	// returned, so that plugin is in the set the absent status names; the FitError carries it for a pod
	// that fails, and absentNodeStatus needs it for one that is scheduled on another node.
	nominatedRejectedBy string
	// nominatedFits: the nominated node passed, so findNodesThatFitPod returned before it set the absent
	// nodes' status (they were never filtered and have none).
	nominatedFits bool
	filters       map[string]*status // nil = feasible
	scores        map[string]*nodeScore
	postfilter    *status
	fitNodeStatus func(node string) *status
	allNodes      []string
	suggested     string
}

func newRecorder() *recorder {
	return &recorder{filters: map[string]*status{}, scores: map[string]*nodeScore{}}
}

// topNodes are the feasible nodes tied at the highest total score, by name.
func (r *recorder) topNodes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var best int64 = -1 << 62
	var top []string
	for name, s := range r.scores {
		if s.Total > best {
			best, top = s.Total, []string{name}
		} else if s.Total == best {
			top = append(top, name)
		}
	}
	sort.Strings(top)
	return top
}

func (r *recorder) fill(res *podResult, inner frameworkT, failed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res.PreFilter = r.prefilter
	res.PreFilterNodeNames = r.prefilterNodes
	res.PostFilter = r.postfilter
	for _, name := range r.allNodes {
		st, evaluated := r.filters[name]
		switch {
		case evaluated && st == nil:
			res.Filters[name] = "feasible"
			res.FeasibleNodes = append(res.FeasibleNodes, name)
		case evaluated:
			res.Filters[name] = st
		case failed && r.fitNodeStatus != nil:
			if s := r.fitNodeStatus(name); s != nil {
				res.Filters[name] = s
			} else {
				res.Filters[name] = "not_evaluated"
			}
		default:
			if s := absentNodeStatus(r); s != nil {
				res.Filters[name] = s
			} else {
				res.Filters[name] = "not_evaluated"
			}
		}
	}
	sort.Strings(res.FeasibleNodes)
	if len(res.FeasibleNodes) > 0 {
		res.Scores = r.scores
		res.ScoredByScheduler = len(res.FeasibleNodes) > 1
		var best int64 = -1 << 62
		for _, s := range r.scores {
			if s.Total > best {
				best = s.Total
			}
		}
		for _, name := range res.FeasibleNodes {
			if s, ok := r.scores[name]; ok && s.Total == best {
				res.TopNodes = append(res.TopNodes, name)
			}
		}
		if len(r.scores) == 0 {
			res.TopNodes = append(res.TopNodes, res.FeasibleNodes...)
		}
		if len(res.TopNodes) > 1 {
			tb := "lowest-name"
			res.TieBreak = &tb
		}
	}
	if failed {
		res.TopNodes = []string{}
		res.TieBreak = nil
	}
}
