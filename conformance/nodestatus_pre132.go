//go:build k8s_pre132

package main

// v1.31: the FitError's Diagnosis holds a NodeToStatusMap of the nodes that were filtered; nodes outside
// a PreFilterResult get no status ("not_evaluated").

import (
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func absentNodeStatus(r *recorder) *status { return nil }

// fitErrorStatuses keeps the per-node statuses of a FitError.
func (r *recorder) fitErrorStatuses(err error) {
	fe, ok := err.(*framework.FitError)
	if !ok || fe.Diagnosis.NodeToStatusMap == nil {
		return
	}
	m := fe.Diagnosis.NodeToStatusMap
	r.fitNodeStatus = func(node string) *status {
		st := m[node]
		if st == nil || st.IsSuccess() {
			return nil
		}
		return toStatus(st)
	}
}
