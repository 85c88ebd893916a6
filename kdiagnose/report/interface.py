"""The formatters' view of the results. The types are owned by the analysis (kdiagnose/results.py)."""

from kdiagnose.results import PodReport, Recorded, Remedy, Report

__all__ = ["PodReport", "Recorded", "Remedy", "Report"]
