//go:build !k8s_pre134 && k8s_pre136

package main

import (
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaimtemplate"
)

// v1.34-v1.35: the strategies take the namespace client their validation uses (not PrepareForCreate).
func claimStrategies() (claim, template rest.RESTCreateStrategy) {
	return resourceclaim.NewStrategy(nil), resourceclaimtemplate.NewStrategy(nil)
}
