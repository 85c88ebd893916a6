//go:build !k8s_pre137

package main

import (
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/scheduler"
)

// v1.37: the scheduler's informer factory takes an informer name (nil: unnamed, as in tests).
func newInformerFactory(cs clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0, nil)
}
