//go:build k8s_pre132

package main

import (
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// v1.31: PostFilter plugins get a NodeToStatusMap (v1.32 made it the NodeToStatusReader interface).
type (
	preFilterResultT    = framework.PreFilterResult
	postFilterResultT   = framework.PostFilterResult
	nodeToStatusReaderT = framework.NodeToStatusMap
	nodePluginScoresT   = framework.NodePluginScores
	nominatingInfoT     = *framework.NominatingInfo
)
