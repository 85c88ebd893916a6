"""Ports of kube-scheduler's own table tests (kubernetes/kubernetes pkg/scheduler/framework/plugins/*_test.go)."""
