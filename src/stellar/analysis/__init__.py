"""Metrics and statistics computed from archives."""
