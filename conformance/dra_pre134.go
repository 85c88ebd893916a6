//go:build k8s_pre134

package main

// Before v1.34 DynamicResourceAllocation is off by default: the API server drops pods' resourceClaims
// (DropDisabledPodFields) and resource.k8s.io/v1 does not exist, so the resourceclaim controller has
// nothing to create.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func (sc *scenario) createClaimsFromTemplates(pod *v1.Pod, nextRV func() string) {}

// dropDisabledFields: the resource.k8s.io/v1 objects are not decoded before v1.34 (skipped_objects).
func dropDisabledFields(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	return obj, nil
}
