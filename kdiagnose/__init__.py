"""kdiagnose: why is my pod Pending? kube-scheduler replay and remedies."""

__version__ = "0.1.0"
