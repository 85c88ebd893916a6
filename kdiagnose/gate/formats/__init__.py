"""The gate's output formats: one module per `kdiagnose check -o` choice (yaml reuses json's document)."""
