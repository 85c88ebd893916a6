//go:build !k8s_pre132

package main

// v1.32 and later: the FitError's Diagnosis holds a NodeToStatus, which gives nodes outside a
// PreFilterResult an absent-nodes status.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/sets"

	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// absentNodeStatus is what findNodesThatFitPod sets for nodes outside a PreFilterResult.
func absentNodeStatus(r *recorder) *status {
	if !r.prefilterRestricts || r.nominatedFits {
		return nil
	}
	plugins := sets.New(r.unschedPlugins...)
	if r.nominatedRejectedBy != "" {
		plugins.Insert(r.nominatedRejectedBy)
	}
	return &status{Plugin: "", Code: codeUnschedulableAndUnresolvable.String(),
		Reasons: []string{fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(plugins))}}
}

// fitErrorStatuses keeps the per-node statuses of a FitError (nodes never filtered included).
func (r *recorder) fitErrorStatuses(err error) {
	fe, ok := err.(*framework.FitError)
	if !ok || fe.Diagnosis.NodeToStatus == nil {
		return
	}
	m := fe.Diagnosis.NodeToStatus
	r.fitNodeStatus = func(node string) *status {
		st := m.Get(node)
		if st == nil || st.IsSuccess() {
			return nil
		}
		return toStatus(st)
	}
}
