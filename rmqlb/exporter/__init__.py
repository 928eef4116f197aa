"""Prometheus metrics of rmqlb's diagnoses: the families of one capture
(:mod:`rmqlb.exporter.metrics`) and the long-running HTTP exporter
(:mod:`rmqlb.exporter.server`) behind ``rmqlb exporter``."""
