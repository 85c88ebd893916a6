//go:build !k8s_pre135

package main

import (
	fwk "k8s.io/kube-scheduler/framework"
)

// v1.35 and later: moved to the staging module k8s.io/kube-scheduler/framework.
type (
	preFilterResultT    = fwk.PreFilterResult
	postFilterResultT   = fwk.PostFilterResult
	nodeToStatusReaderT = fwk.NodeToStatusReader
	nodePluginScoresT   = fwk.NodePluginScores
	nominatingInfoT     = *fwk.NominatingInfo
)
