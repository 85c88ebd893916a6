"""The cluster's autoscalers as the snapshot shows them: cluster-autoscaler's status ConfigMap (status.py),
Karpenter's NodePools and NodeClaims (karpenter.py), the events both write about pods (events.py), and
their join with kdiagnose's node pools (view.py). Pure; below remedies, beside model/."""
