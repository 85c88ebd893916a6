"""kdiagnose."""
