// Command harness runs the real kube-scheduler, in-process and at the exact release it was built with,
// on kdiagnose scenario files, and writes what it decided in the format of fixtures/golden*/*.json.
//
//	harness [-config NAME.config.yaml] NAME.yaml          one scenario, JSON on stdout
//	harness -in fixtures/golden -out DIR                  every NAME.yaml under a directory (a
//	                                                      NAME.config.yaml beside one is its configuration)
//
// See conformance/README.md.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"k8s.io/klog/v2"
)

// output is one .json file; field order as in fixtures/golden*.
type output struct {
	K8sVersion       string         `json:"k8s_version"`
	Case             string         `json:"case"`
	Config           *string        `json:"config,omitempty"`
	Profiles         *[]string      `json:"profiles,omitempty"`
	Percentage       map[string]any `json:"percentage_of_nodes_to_score,omitempty"`
	Error            *string        `json:"error,omitempty"`
	ErrorStage       *string        `json:"error_stage,omitempty"`
	ConfigNotApplied []string       `json:"config_not_applied,omitempty"`
	NumNodes         int            `json:"num_nodes"`
	NumBoundPods     int            `json:"num_bound_pods"`
	SkippedObjects   []string       `json:"skipped_objects"`
	Pods             []*podResult   `json:"pods"`
}

func k8sVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/kubernetes" {
				return d.Version
			}
		}
	}
	return "unknown"
}

func runCase(ctx context.Context, path, configPath string) (*output, error) {
	out := &output{K8sVersion: k8sVersion(), Case: filepath.Base(path), SkippedObjects: []string{}, Pods: []*podResult{}}
	sc, err := loadScenario(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out.NumNodes = sc.nodes
	out.NumBoundPods = len(sc.bound)
	if sc.skipped != nil {
		out.SkippedObjects = sc.skipped
	}
	lc := loadConfig(ctx, configPath)
	if configPath != "" {
		name := filepath.Base(configPath)
		out.Config = &name
		out.Profiles = &[]string{}
		out.Percentage = lc.percentage
		out.ConfigNotApplied = lc.notApplied
		if lc.cfg != nil && lc.stage != "load" && lc.stage != "validate" {
			for _, p := range lc.cfg.Profiles {
				*out.Profiles = append(*out.Profiles, p.SchedulerName)
			}
		}
	}
	if lc.err == nil {
		lc.err = checkBuild(ctx, sc, lc.cfg)
		if lc.err != nil {
			lc.stage = "build"
		}
	}
	if lc.err != nil {
		if configPath == "" {
			return nil, fmt.Errorf("%s: default configuration: %w", path, lc.err)
		}
		msg, stage := lc.err.Error(), lc.stage
		out.Error, out.ErrorStage = &msg, &stage
		out.Profiles = &[]string{}
		return out, nil
	}
	profiles := map[string]bool{}
	var names []string
	for _, p := range lc.cfg.Profiles {
		profiles[p.SchedulerName] = true
		names = append(names, p.SchedulerName)
	}
	for _, pod := range sc.pending {
		name := pod.Spec.SchedulerName
		if !profiles[name] {
			if configPath == "" {
				continue // another scheduler's pod: kube-scheduler ignores it, and so does the corpus
			}
			no := false
			why := fmt.Sprintf("no profile with schedulerName %q (profiles: %s): kube-scheduler ignores the pod", name, strings.Join(names, ", "))
			out.Pods = append(out.Pods, &podResult{Pod: pod.Namespace + "/" + pod.Name, Profile: &name, Handled: &no,
				NotHandled: &why, TopNodes: []string{}, FeasibleNodes: []string{}, Filters: map[string]any{},
				Scores: map[string]*nodeScore{}, ScoreWeights: map[string]int64{}, Events: []event{}})
			continue
		}
		res, err := schedulePod(ctx, sc, lc.cfg, pod)
		if err != nil {
			return nil, fmt.Errorf("%s: pod %s/%s: %w", path, pod.Namespace, pod.Name, err)
		}
		if configPath != "" {
			yes := true
			res.Profile, res.Handled = &name, &yes
		}
		out.Pods = append(out.Pods, res)
	}
	return out, nil
}

func encode(out *output) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func main() {
	klog.InitFlags(nil)
	configPath := flag.String("config", "", "KubeSchedulerConfiguration file (kube-scheduler --config)")
	inDir := flag.String("in", "", "directory of scenarios (recursive)")
	outDir := flag.String("out", "", "directory to write NAME.json files to (with -in)")
	only := flag.String("only", "", "with -in: comma-separated relative names (without .yaml) to run")
	version := flag.Bool("version", false, "print the kube-scheduler release built in")
	_ = flag.Set("v", "0")
	_ = flag.Set("logtostderr", "false")
	_ = flag.Set("stderrthreshold", "FATAL")
	flag.Parse()
	klog.SetOutput(discard{})
	ctx := context.Background()
	if *version {
		fmt.Println(k8sVersion())
		return
	}
	if *inDir != "" {
		if *outDir == "" {
			fail(fmt.Errorf("-in needs -out"))
		}
		want := map[string]bool{}
		for _, n := range strings.Split(*only, ",") {
			if n != "" {
				want[n] = true
			}
		}
		var cases []string
		err := filepath.WalkDir(*inDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".config.yaml") {
				return nil
			}
			rel, _ := filepath.Rel(*inDir, p)
			if len(want) > 0 && !want[strings.TrimSuffix(rel, ".yaml")] {
				return nil
			}
			cases = append(cases, rel)
			return nil
		})
		if err != nil {
			fail(err)
		}
		sort.Strings(cases)
		for _, rel := range cases {
			p := filepath.Join(*inDir, rel)
			cfg := strings.TrimSuffix(p, ".yaml") + ".config.yaml"
			if _, err := os.Stat(cfg); err != nil {
				cfg = ""
			}
			out, err := runCase(ctx, p, cfg)
			if err != nil {
				fail(err)
			}
			data, err := encode(out)
			if err != nil {
				fail(err)
			}
			dst := filepath.Join(*outDir, strings.TrimSuffix(rel, ".yaml")+".json")
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				fail(err)
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				fail(err)
			}
		}
		return
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: harness [-config NAME.config.yaml] NAME.yaml | harness -in DIR -out DIR")
		os.Exit(2)
	}
	out, err := runCase(ctx, flag.Arg(0), *configPath)
	if err != nil {
		fail(err)
	}
	data, err := encode(out)
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(data)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "harness:", err)
	os.Exit(3)
}
