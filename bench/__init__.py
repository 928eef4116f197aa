"""Benchmarks: ``python -m bench`` prints time ratios against a floor; nothing is asserted."""
