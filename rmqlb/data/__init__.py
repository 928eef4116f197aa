"""Package data: JSON Schemas and the demo snapshot (read with importlib.resources)."""
