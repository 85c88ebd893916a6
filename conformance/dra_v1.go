//go:build !k8s_pre134

package main

// The resourceclaim controller's part (pkg/controller/resourceclaim): a ResourceClaim per pod claim that
// names a ResourceClaimTemplate, owned by the pod, and the pod's status.resourceClaimStatuses entry.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/resource"
	"k8s.io/kubernetes/pkg/registry/resource/deviceclass"
	"k8s.io/kubernetes/pkg/registry/resource/resourceslice"

	_ "k8s.io/kubernetes/pkg/apis/resource/install"
)

// dropDisabledFields does to a resource.k8s.io/v1 object what the API server's create does between
// decoding and storage: the strategy's PrepareForCreate (pkg/registry/resource/*/strategy.go), which drops
// the fields of feature gates that are off (DRAPartitionableDevices' sharedCounters and consumesCounters,
// DRAConsumableCapacity's allowMultipleAllocations, requestPolicy and capacity requests, DRADeviceTaints'
// taints and tolerations, DRAExtendedResource's extendedResourceName, ...). A ResourceClaim's recorded
// status is kept: the resourceclaim controller and the scheduler write it through the status subresource.
// Other objects are returned unchanged.
func dropDisabledFields(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	var strategy rest.RESTCreateStrategy
	var internal runtime.Object
	var status *resourceapi.ResourceClaimStatus
	claims, templates := claimStrategies()
	switch o := obj.(type) {
	case *resourceapi.ResourceSlice:
		strategy, internal = resourceslice.Strategy, &resource.ResourceSlice{}
	case *resourceapi.DeviceClass:
		strategy, internal = deviceclass.Strategy, &resource.DeviceClass{}
	case *resourceapi.ResourceClaim:
		strategy, internal, status = claims, &resource.ResourceClaim{}, o.Status.DeepCopy()
	case *resourceapi.ResourceClaimTemplate:
		strategy, internal = templates, &resource.ResourceClaimTemplate{}
	default:
		return obj, nil
	}
	if err := legacyscheme.Scheme.Convert(obj, internal, nil); err != nil {
		return nil, err
	}
	strategy.PrepareForCreate(ctx, internal)
	out, err := legacyscheme.Scheme.New(obj.GetObjectKind().GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(out)
	out.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	if claim, ok := out.(*resourceapi.ResourceClaim); ok && status != nil {
		claim.Status = *status
	}
	return out, nil
}

const podResourceClaimAnnotation = "resource.kubernetes.io/pod-claim-name"

func (sc *scenario) createClaimsFromTemplates(pod *v1.Pod, nextRV func() string) {
	templates := map[string]*resourceapi.ResourceClaimTemplate{}
	for _, obj := range sc.objects {
		if t, ok := obj.(*resourceapi.ResourceClaimTemplate); ok && t.Namespace == pod.Namespace {
			templates[t.Name] = t
		}
	}
	have := map[string]bool{}
	for _, st := range pod.Status.ResourceClaimStatuses {
		have[st.Name] = true
	}
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName == nil || have[pc.Name] {
			continue
		}
		template := templates[*pc.ResourceClaimTemplateName]
		if template == nil {
			continue // the controller cannot create it; the scheduler reports the missing claim
		}
		isTrue := true
		annotations := map[string]string{}
		for k, v := range template.Spec.ObjectMeta.Annotations {
			annotations[k] = v
		}
		annotations[podResourceClaimAnnotation] = pc.Name
		generateName := pod.Name + "-" + pc.Name + "-"
		if maxBaseLen := 57; len(generateName) > maxBaseLen {
			generateName = pod.Name[0:len(pod.Name)*maxBaseLen/len(generateName)] + "-" +
				pc.Name[0:len(pc.Name)*maxBaseLen/len(generateName)]
		}
		suffix := nameSuffix(string(pod.UID) + "/" + pc.Name)
		claim := &resourceapi.ResourceClaim{
			TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
			ObjectMeta: metav1.ObjectMeta{
				Name:              generateName + suffix,
				Namespace:         pod.Namespace,
				UID:               deterministicUID("ResourceClaim", pod.Namespace, generateName+suffix),
				ResourceVersion:   nextRV(),
				CreationTimestamp: pod.CreationTimestamp,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
					Controller: &isTrue, BlockOwnerDeletion: &isTrue,
				}},
				Annotations: annotations,
				Labels:      template.Spec.ObjectMeta.Labels,
			},
			Spec: *template.Spec.Spec.DeepCopy(),
		}
		legacyscheme.Scheme.Default(claim)
		sc.claimsOf[pod.UID] = append(sc.claimsOf[pod.UID], runtime.Object(claim))
		name := claim.Name
		pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses,
			v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: &name})
	}
}
