//go:build !k8s_pre136

package main

import (
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaimtemplate"
)

// v1.36+: the ResourceClaim strategy also takes an authorizer (used by validation, not by PrepareForCreate).
func claimStrategies() (claim, template rest.RESTCreateStrategy) {
	return resourceclaim.NewStrategy(nil, nil), resourceclaimtemplate.NewStrategy(nil)
}
