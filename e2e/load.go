package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// readScenario reads a multi-document YAML (or JSON) file; `kind: List` documents are flattened.
func readScenario(path string) ([]*unstructured.Unstructured, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var objs []*unstructured.Unstructured
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(doc) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: doc}
		if u.IsList() {
			items, _, _ := unstructured.NestedSlice(doc, "items")
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					objs = append(objs, &unstructured.Unstructured{Object: m})
				}
			}
			continue
		}
		objs = append(objs, u)
	}
	return objs, nil
}

type loader struct {
	dyn    dynamic.Interface
	cs     kubernetes.Interface
	mapper meta.RESTMapper
}

func newLoader(cfg *rest.Config, dyn dynamic.Interface) (*loader, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
	return &loader{dyn: dyn, cs: cs, mapper: mapper}, nil
}

func isPendingPod(u *unstructured.Unstructured) bool {
	if u.GetKind() != "Pod" || u.GroupVersionKind().Group != "" {
		return false
	}
	node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName")
	return node == ""
}

// rank orders creation as a cluster came to hold the objects: what others reference first, pods bound
// before pending ones, quota and events last (a quota without status would reject the pods it counts).
func rank(u *unstructured.Unstructured) int {
	switch u.GetKind() {
	case "Namespace":
		return 0
	case "PriorityClass", "StorageClass", "RuntimeClass", "CSIDriver", "DeviceClass", "VolumeAttributesClass":
		return 1
	case "Node":
		return 2
	case "CSINode", "PersistentVolume", "ResourceSlice", "VolumeAttachment":
		return 3
	case "ServiceAccount", "LimitRange", "ConfigMap", "Secret":
		return 4
	case "Pod":
		if isPendingPod(u) {
			return 7
		}
		return 6
	case "ResourceQuota", "Event":
		return 8
	}
	return 5
}

// metadata the API server assigns: a scenario recorded from a cluster carries them, a create must not.
var serverFields = []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

func (l *loader) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, bool, error) {
	gvk := u.GroupVersionKind()
	m, err := l.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, false, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := u.GetNamespace()
		if ns == "" {
			ns = "default"
			u.SetNamespace(ns)
		}
		return l.dyn.Resource(m.Resource).Namespace(ns), true, nil
	}
	return l.dyn.Resource(m.Resource), false, nil
}

func describe(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	}
	return fmt.Sprintf("%s %s", u.GetKind(), u.GetName())
}

// loadScenario creates every object through the API. Pending pods get their recorded status only when
// no scheduler runs (the real one writes it otherwise). Returns the count of objects per kind.
func loadScenario(ctx context.Context, l *loader, objs []*unstructured.Unstructured, pendingStatus bool) (map[string]int, error) {
	sorted := append([]*unstructured.Unstructured(nil), objs...)
	sort.SliceStable(sorted, func(i, j int) bool { return rank(sorted[i]) < rank(sorted[j]) })
	if err := l.serviceAccounts(ctx, sorted); err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, u := range sorted {
		if err := l.create(ctx, u.DeepCopy(), pendingStatus); err != nil {
			return nil, fmt.Errorf("%s: %w", describe(u), err)
		}
		counts[u.GetKind()]++
	}
	return counts, nil
}

// serviceAccounts creates the service accounts pods name (the ServiceAccount admission plugin rejects a pod
// whose account is missing; in a cluster the token controller creates "default" in every namespace).
func (l *loader) serviceAccounts(ctx context.Context, objs []*unstructured.Unstructured) error {
	want := map[[2]string]bool{}
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			want[[2]string{u.GetName(), "default"}] = true
		}
		if u.GetKind() == "Pod" {
			ns := u.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			sa, _, _ := unstructured.NestedString(u.Object, "spec", "serviceAccountName")
			if sa == "" {
				sa = "default"
			}
			want[[2]string{ns, "default"}] = true
			want[[2]string{ns, sa}] = true
		}
	}
	for _, u := range objs {
		if u.GetKind() == "ServiceAccount" {
			delete(want, [2]string{u.GetNamespace(), u.GetName()})
		}
	}
	keys := make([][2]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"/"+keys[i][1] < keys[j][0]+"/"+keys[j][1] })
	for _, k := range keys {
		if err := l.ensureNamespace(ctx, k[0]); err != nil {
			return err
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: k[1], Namespace: k[0]}}
		if _, err := l.cs.CoreV1().ServiceAccounts(k[0]).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("ServiceAccount %s/%s: %w", k[0], k[1], err)
		}
	}
	return nil
}

func (l *loader) ensureNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := l.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("Namespace %s: %w", name, err)
	}
	return nil
}

func (l *loader) create(ctx context.Context, u *unstructured.Unstructured, pendingStatus bool) error {
	ri, _, err := l.resource(u)
	if err != nil {
		return err
	}
	status, hasStatus := u.Object["status"]
	delete(u.Object, "status")
	deleting := u.GetDeletionTimestamp() != nil
	var grace *int64 = u.GetDeletionGracePeriodSeconds()
	for _, f := range serverFields {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	isPod := u.GetKind() == "Pod" && u.GroupVersionKind().Group == ""
	nodeName := ""
	if isPod {
		nodeName, _, _ = unstructured.NestedString(u.Object, "spec", "nodeName")
		unstructured.RemoveNestedField(u.Object, "spec", "nodeName")
	}
	if deleting && len(u.GetFinalizers()) == 0 && !(isPod && nodeName != "") {
		// Keeps the object Terminating after the delete below, as its recorded state shows (a bound pod
		// stays Terminating by itself until its kubelet, absent here, confirms).
		u.SetFinalizers([]string{"kdiagnose.dev/e2e-terminating"})
	}

	created, err := ri.Create(ctx, u, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Objects the API server bootstraps (default namespaces, system priority classes): take the
		// scenario's labels and annotations.
		cur, gerr := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
		if gerr != nil {
			return gerr
		}
		cur.SetLabels(merge(cur.GetLabels(), u.GetLabels()))
		cur.SetAnnotations(merge(cur.GetAnnotations(), u.GetAnnotations()))
		_, err = ri.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	}
	if err != nil {
		return err
	}

	if isPod && nodeName != "" {
		b := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: created.GetName(), Namespace: created.GetNamespace()},
			Target:     corev1.ObjectReference{Kind: "Node", Name: nodeName},
		}
		if err := l.cs.CoreV1().Pods(created.GetNamespace()).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("binding to %s: %w", nodeName, err)
		}
	}
	wantStatus := hasStatus && u.GetKind() != "Namespace" && (!isPod || nodeName != "" || pendingStatus)
	if wantStatus {
		if err := l.setStatus(ctx, ri, created.GetName(), status); err != nil {
			return fmt.Errorf("status: %w", err)
		}
	}
	if u.GetKind() == "Node" && u.GroupVersionKind().Group == "" {
		if err := l.restoreTaints(ctx, ri, u); err != nil {
			return fmt.Errorf("taints: %w", err)
		}
	}
	if deleting {
		opts := metav1.DeleteOptions{GracePeriodSeconds: grace}
		if err := ri.Delete(ctx, created.GetName(), opts); err != nil {
			return fmt.Errorf("delete (recorded as terminating): %w", err)
		}
	}
	return nil
}

func merge(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// setStatus writes the recorded status through the status subresource; kinds without one are skipped.
func (l *loader) setStatus(ctx context.Context, ri dynamic.ResourceInterface, name string, status any) error {
	if status == nil {
		return nil
	}
	if m, ok := status.(map[string]any); ok && len(m) == 0 {
		return nil
	}
	for attempt := 0; ; attempt++ {
		cur, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Object["status"] = status
		_, err = ri.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return nil // no status subresource
		}
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		return err
	}
}

// restoreTaints puts back the recorded taints: the TaintNodesByCondition admission plugin adds
// node.kubernetes.io/not-ready to every new node, and the node lifecycle controller that removes it once
// the node reports Ready does not run here.
func (l *loader) restoreTaints(ctx context.Context, ri dynamic.ResourceInterface, u *unstructured.Unstructured) error {
	want, _, _ := unstructured.NestedSlice(u.Object, "spec", "taints")
	cur, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	have, _, _ := unstructured.NestedSlice(cur.Object, "spec", "taints")
	if reflect.DeepEqual(stripTimes(want), stripTimes(have)) {
		return nil
	}
	if len(want) == 0 {
		unstructured.RemoveNestedField(cur.Object, "spec", "taints")
	} else if err := unstructured.SetNestedSlice(cur.Object, want, "spec", "taints"); err != nil {
		return err
	}
	_, err = ri.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

func stripTimes(taints []any) []string {
	out := make([]string, 0, len(taints))
	for _, t := range taints {
		if m, ok := t.(map[string]any); ok {
			out = append(out, fmt.Sprintf("%v=%v:%v", m["key"], m["value"], m["effect"]))
		}
	}
	sort.Strings(out)
	return out
}

// What kdiagnose reads (kdiagnose/load/kinds.py): the viewer may get/list/watch all of it cluster-wide; the
// developer only the namespaced part, in one namespace.
var readRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods", "persistentvolumeclaims", "services", "replicationcontrollers", "events"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"replicasets", "statefulsets"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"csistoragecapacities"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceclaims", "resourceclaimtemplates"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch"}},
}

var clusterReadRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"nodes", "namespaces", "persistentvolumes"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses", "csinodes", "csidrivers", "volumeattachments"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"priorityclasses"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceslices", "deviceclasses"}, Verbs: []string{"get", "list", "watch"}},
	// The autoscalers' state (kdiagnose/autoscaler): cluster-autoscaler's status ConfigMap, Karpenter's API.
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cluster-autoscaler-status"}, Verbs: []string{"get"}},
	{APIGroups: []string{"karpenter.sh"}, Resources: []string{"nodepools", "nodeclaims"}, Verbs: []string{"get", "list", "watch"}},
}

func setupRBAC(ctx context.Context, l *loader, devNamespace string) error {
	rbac := l.cs.RbacV1()
	viewer := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "kdiagnose-viewer"},
		Rules:      append(append([]rbacv1.PolicyRule(nil), readRules...), clusterReadRules...),
	}
	if _, err := rbac.ClusterRoles().Create(ctx, viewer, metav1.CreateOptions{}); err != nil {
		return err
	}
	vb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kdiagnose-viewer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "kdiagnose-viewer"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: viewerUser}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, vb, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := l.ensureNamespace(ctx, devNamespace); err != nil {
		return err
	}
	dev := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "kdiagnose-developer", Namespace: devNamespace},
		Rules:      readRules,
	}
	if _, err := rbac.Roles(devNamespace).Create(ctx, dev, metav1.CreateOptions{}); err != nil {
		return err
	}
	db := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kdiagnose-developer", Namespace: devNamespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "kdiagnose-developer"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: developerUser}},
	}
	_, err := rbac.RoleBindings(devNamespace).Create(ctx, db, metav1.CreateOptions{})
	return err
}

// waitScheduled waits until the scheduler has decided every pending pod it owns: bound, or with a
// PodScheduled condition (Unschedulable, SchedulingGated).
func waitScheduled(ctx context.Context, l *loader, objs []*unstructured.Unstructured, timeout time.Duration) error {
	var left []string
	ok := waitFor(timeout, func() bool {
		left = left[:0]
		for _, u := range objs {
			if !isPendingPod(u) {
				continue
			}
			sn, _, _ := unstructured.NestedString(u.Object, "spec", "schedulerName")
			if sn != "" && sn != corev1.DefaultSchedulerName {
				continue
			}
			ns := u.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			p, err := l.cs.CoreV1().Pods(ns).Get(ctx, u.GetName(), metav1.GetOptions{})
			if err != nil {
				left = append(left, ns+"/"+u.GetName())
				continue
			}
			decided := p.Spec.NodeName != ""
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled {
					decided = true
				}
			}
			if !decided {
				left = append(left, ns+"/"+u.GetName())
			}
		}
		return len(left) == 0
	})
	if !ok {
		return fmt.Errorf("the scheduler did not decide %s within %s", strings.Join(left, ", "), timeout)
	}
	return nil
}
