package main

// The scheduler configuration: kube-scheduler's own defaults (latest.Default) with
// percentageOfNodesToScore 100, or a KubeSchedulerConfiguration file loaded, defaulted and validated by
// kube-scheduler's own code (options.LoadConfigFromFile, ValidateKubeSchedulerConfiguration).

import (
	"context"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"sigs.k8s.io/yaml"
)

type loadedConfig struct {
	cfg        *schedulerapi.KubeSchedulerConfiguration
	stage      string
	err        error
	percentage map[string]any
	notApplied []string
}

func loadConfig(ctx context.Context, path string) loadedConfig {
	hundred := int32(100)
	if path == "" {
		cfg, err := latest.Default()
		if err != nil {
			return loadedConfig{err: err, stage: "load"}
		}
		cfg.PercentageOfNodesToScore = &hundred
		return loadedConfig{cfg: cfg}
	}
	cfg, err := options.LoadConfigFromFile(klog.FromContext(ctx), path)
	if err != nil {
		return loadedConfig{err: err, stage: "load"}
	}
	if errs := validation.ValidateKubeSchedulerConfiguration(cfg); errs != nil {
		return loadedConfig{cfg: cfg, err: errs, stage: "validate"}
	}
	lc := loadedConfig{cfg: cfg}
	// Which percentages the file itself sets (after defaulting they cannot be told apart).
	raw := map[string]any{}
	if data, err := os.ReadFile(path); err == nil {
		_ = yaml.Unmarshal(data, &raw)
	}
	if _, ok := raw["percentageOfNodesToScore"]; ok && cfg.PercentageOfNodesToScore != nil {
		lc.percentage = map[string]any{"global": *cfg.PercentageOfNodesToScore, "global_from_config": true}
	} else {
		cfg.PercentageOfNodesToScore = &hundred
	}
	if profiles, ok := raw["profiles"].([]any); ok {
		per := map[string]any{}
		for i, p := range profiles {
			pm, _ := p.(map[string]any)
			if _, ok := pm["percentageOfNodesToScore"]; ok && i < len(cfg.Profiles) && cfg.Profiles[i].PercentageOfNodesToScore != nil {
				per[cfg.Profiles[i].SchedulerName] = *cfg.Profiles[i].PercentageOfNodesToScore
			}
		}
		if len(per) > 0 {
			if lc.percentage == nil {
				lc.percentage = map[string]any{"global": hundred, "global_from_config": false}
			}
			lc.percentage["profiles"] = per
		}
	}
	if len(cfg.Extenders) > 0 {
		lc.notApplied = append(lc.notApplied, fmt.Sprintf("extenders: %d HTTP extender(s) not called (no such service offline)", len(cfg.Extenders)))
		cfg.Extenders = nil
	}
	return lc
}

// checkBuild builds the scheduler once on the cluster, as kube-scheduler does at start-up, so that a
// configuration scheduler.New rejects is reported as such.
func checkBuild(parent context.Context, sc *scenario, cfg *schedulerapi.KubeSchedulerConfiguration) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	objs := append([]runtime.Object{}, sc.objects...)
	for _, p := range sc.bound {
		objs = append(objs, p.DeepCopy())
	}
	client := fake.NewSimpleClientset(objs...)
	events := &eventLog{bump: make(chan struct{}, 1)}
	_, err := scheduler.New(ctx, client, newInformerFactory(client), nil,
		func(string) eventRecorderT { return recorderFor(events) },
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
	)
	return err
}
