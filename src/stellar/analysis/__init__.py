"""Metrics, diversity, statistics, plots and experiment reports, computed from archives."""
