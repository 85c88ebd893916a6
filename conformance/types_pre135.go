//go:build k8s_pre135 && !k8s_pre132

package main

import (
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// v1.32-v1.34: these framework types still live in k8s.io/kubernetes/pkg/scheduler/framework.
type (
	preFilterResultT    = framework.PreFilterResult
	postFilterResultT   = framework.PostFilterResult
	nodeToStatusReaderT = framework.NodeToStatusReader
	nodePluginScoresT   = framework.NodePluginScores
	nominatingInfoT     = *framework.NominatingInfo
)
