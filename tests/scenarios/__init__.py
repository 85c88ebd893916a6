"""Hand-derived scenarios: small clusters whose expected kube-scheduler outcome was worked out from upstream source."""
