package main

// Loading a scenario file and doing to its objects what the API server and its controllers would have
// done before kube-scheduler saw them: API defaulting, the fields a disabled feature gate drops, the
// mutating admission plugins the corpus relies on (LimitRanger, Priority, DefaultTolerationSeconds,
// RuntimeClass, run as the real plugin code), built-in PriorityClasses, resourceVersions, and the
// ResourceClaims the resourceclaim controller creates from templates.

import (
	"bytes"
	"context"
	"crypto/sha1"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	schedulingv1helpers "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	"k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"
	"k8s.io/kubernetes/plugin/pkg/admission/limitranger"
	"k8s.io/kubernetes/plugin/pkg/admission/priority"
	"k8s.io/kubernetes/plugin/pkg/admission/runtimeclass"
	"sigs.k8s.io/yaml"

	// The API groups' internal types, conversions and defaulting functions, as the API server registers them.
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
)

// scenario is one input file after API-server processing.
type scenario struct {
	objects  []runtime.Object // everything but pods
	bound    []*v1.Pod        // pods with spec.nodeName, terminal ones dropped
	pending  []*v1.Pod        // pods without spec.nodeName, terminal ones dropped
	nodes    int
	skipped  []string
	claimsOf map[types.UID][]runtime.Object // ResourceClaims created from templates, per pending pod
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// splitDocuments returns the documents of a multi-document YAML file (the part before the first
// separator, comments only in the corpus, is doc[0]) or the items of a JSON/YAML List.
func splitDocuments(data []byte) [][]byte {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return [][]byte{trimmed}
	}
	var docs [][]byte
	for _, d := range docSeparator.Split(string(data), -1) {
		docs = append(docs, []byte(d))
	}
	return docs
}

func loadScenario(ctx context.Context, path string) (*scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc := &scenario{claimsOf: map[types.UID][]runtime.Object{}}
	var objs []runtime.Object
	decoder := clientscheme.Codecs.UniversalDeserializer()
	var decodeDoc func(label string, doc []byte)
	decodeDoc = func(label string, doc []byte) {
		var probe map[string]interface{}
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			sc.skipped = append(sc.skipped, fmt.Sprintf("%s: %v", label, err))
			return
		}
		if len(probe) == 0 {
			return // comments only
		}
		u := &unstructured.Unstructured{Object: probe}
		if u.IsList() || strings.HasSuffix(u.GetKind(), "List") {
			items, _, _ := unstructured.NestedSlice(probe, "items")
			for i, item := range items {
				raw, _ := yaml.Marshal(item)
				decodeDoc(fmt.Sprintf("%s.items[%d]", label, i), raw)
			}
			return
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			sc.skipped = append(sc.skipped, fmt.Sprintf("%s (%s %s): %v", label, u.GetAPIVersion(), u.GetKind(), err))
			return
		}
		objs = append(objs, obj)
	}
	for i, doc := range splitDocuments(data) {
		decodeDoc(fmt.Sprintf("doc[%d]", i), doc)
	}
	return sc, sc.admit(ctx, objs)
}

// deterministicUID gives an object without metadata.uid a stable one (the API server would assign a
// random one; nothing in the output depends on its value except the Preempted event text).
func deterministicUID(kind, ns, name string) types.UID {
	h := sha1.Sum([]byte(kind + "/" + ns + "/" + name))
	h[6] = (h[6] & 0x0f) | 0x50
	h[8] = (h[8] & 0x3f) | 0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16]))
}

// nameSuffix stands for the 5 random characters the API server appends to a generateName: a hash of
// seed, so that runs are identical.
func nameSuffix(seed string) string {
	h := sha1.Sum([]byte(seed))
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = alphabet[int(h[i])%len(alphabet)]
	}
	return string(suffix)
}

func (sc *scenario) admit(ctx context.Context, objs []runtime.Object) error {
	rv := 0
	nextRV := func() string { rv++; return strconv.Itoa(rv) }
	var pods []*v1.Pod
	var admissionObjs []runtime.Object
	havePC := map[string]bool{}
	for _, obj := range objs {
		// API defaulting, as on decoding a request and again on reading from storage.
		legacyscheme.Scheme.Default(obj)
		obj, err := dropDisabledFields(ctx, obj)
		if err != nil {
			return err
		}
		m, err := metaOf(obj)
		if err != nil {
			return err
		}
		if m.GetResourceVersion() == "" {
			m.SetResourceVersion(nextRV())
		} else if _, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64); err != nil {
			m.SetResourceVersion(nextRV())
		}
		if m.GetUID() == "" {
			m.SetUID(deterministicUID(fmt.Sprintf("%T", obj), m.GetNamespace(), m.GetName()))
		}
		if ts := m.GetCreationTimestamp(); ts.IsZero() {
			m.SetCreationTimestamp(metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)))
		}
		if pod, ok := obj.(*v1.Pod); ok {
			if pod.Namespace == "" {
				pod.Namespace = metav1.NamespaceDefault
			}
			pods = append(pods, pod)
			continue
		}
		if pc, ok := priorityClassName(obj); ok {
			havePC[pc] = true
		}
		admissionObjs = append(admissionObjs, obj)
		sc.objects = append(sc.objects, obj)
	}
	// The API server creates the built-in PriorityClasses at start-up.
	for _, pc := range schedulingv1helpers.SystemPriorityClasses() {
		if !havePC[pc.Name] {
			admissionObjs = append(admissionObjs, pc.DeepCopy())
		}
	}

	client := fake.NewSimpleClientset(admissionObjs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	limitRanger, err := limitranger.NewLimitRanger(&limitranger.DefaultLimitRangerActions{})
	if err != nil {
		return err
	}
	limitRanger.SetExternalKubeInformerFactory(factory)
	limitRanger.SetExternalKubeClientSet(client)
	prio := priority.NewPlugin()
	prio.SetExternalKubeInformerFactory(factory)
	prio.SetExternalKubeClientSet(client)
	tolerations := defaulttolerationseconds.NewDefaultTolerationSeconds()
	inspectFeatureGates(tolerations)
	rc := runtimeclass.NewRuntimeClass()
	rc.SetExternalKubeInformerFactory(factory)
	rc.SetExternalKubeClientSet(client)
	inspectFeatureGates(prio)
	inspectFeatureGates(limitRanger)
	inspectFeatureGates(rc)
	// The order of kube-apiserver's default admission chain (LimitRanger, ..., Priority,
	// DefaultTolerationSeconds, ..., RuntimeClass).
	chain := []admission.MutationInterface{limitRanger, prio, tolerations, rc}
	for _, p := range chain {
		if v, ok := p.(admission.InitializationValidator); ok {
			if err := v.ValidateInitialization(); err != nil {
				return err
			}
		}
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	for _, p := range chain {
		if h, ok := p.(interface{ WaitForReady() bool }); ok {
			h.WaitForReady()
		}
	}

	for _, pod := range pods {
		if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue // the scheduler's pod informer selects status.phase!=Succeeded,status.phase!=Failed
		}
		admitted, err := admitPod(ctx, chain, pod)
		if err != nil {
			sc.skipped = append(sc.skipped, fmt.Sprintf("v1 Pod %s/%s: %v", pod.Namespace, pod.Name, err))
			continue
		}
		if admitted.Spec.NodeName != "" {
			sc.bound = append(sc.bound, admitted)
		} else {
			sc.pending = append(sc.pending, admitted)
		}
	}
	for _, obj := range sc.objects {
		if _, ok := obj.(*v1.Node); ok {
			sc.nodes++
		}
	}
	sort.Slice(sc.pending, func(i, j int) bool {
		a, b := sc.pending[i], sc.pending[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	for _, pod := range sc.pending {
		sc.createClaimsFromTemplates(pod, nextRV)
	}
	return nil
}

// inspectFeatureGates hands the plugin the feature gates, as the admission initializer does.
func inspectFeatureGates(p interface{}) {
	if w, ok := p.(initializer.WantsFeatures); ok {
		w.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	}
}

func priorityClassName(obj runtime.Object) (string, bool) {
	if pc, ok := obj.(*schedulingv1.PriorityClass); ok {
		return pc.Name, true
	}
	return "", false
}

// admitPod runs one pod create through conversion to the internal type, the mutating admission chain,
// the strategy's dropping of fields of disabled features, and back to v1 with defaults re-applied.
func admitPod(ctx context.Context, chain []admission.MutationInterface, pod *v1.Pod) (*v1.Pod, error) {
	internal := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, internal, nil); err != nil {
		return nil, err
	}
	attrs := admission.NewAttributesRecord(internal, nil, api.Kind("Pod").WithVersion("version"), internal.Namespace,
		internal.Name, api.Resource("pods").WithVersion("version"), "", admission.Create, &metav1.CreateOptions{},
		false, &user.DefaultInfo{Name: "kdiagnose-conformance"})
	for _, p := range chain {
		if !p.(admission.Interface).Handles(admission.Create) {
			continue
		}
		if _, isPriority := p.(*priority.Plugin); isPriority && pod.Spec.Priority != nil {
			// A pod that already carries spec.priority comes from storage (a dump): Priority admission
			// ran when it was created and would now refuse the value it computed itself.
			continue
		}
		if err := p.Admit(ctx, attrs, nil); err != nil {
			return nil, err
		}
	}
	podutil.DropDisabledPodFields(internal, nil)
	out := &v1.Pod{}
	if err := legacyscheme.Scheme.Convert(internal, out, nil); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(out)
	out.TypeMeta = pod.TypeMeta
	return out, nil
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return m, nil
}
