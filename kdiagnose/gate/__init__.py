"""The CI gate behind `kdiagnose check`, a package of its own.

- placement.py: place every replica of every workload on the snapshot, one after another (run_gate)
- policy.py:    outcomes from best to worst, `--fail-on`, ignore rules, the exit code
- result.py:    GateResult / WorkloadResult / Placement / Headroom, what the formats render
- config.py:    `.kdiagnose.yaml`, the per-repository defaults
- locate.py:    paths relative to the path base, object and field lines (PyYAML marks), helm `# Source:`
- blame.py:     which manifest fields a failure is about; where.py fills the locations
- findings.py:  the errors, warnings and notes every CI format reports, and input errors as findings
- formats/:     text (human), json/yaml, junit, sarif, github workflow commands

Nothing is imported here, so `kdiagnose.gate.formats.*` and `kdiagnose.gate.config` stay light.
"""
