"""Benchmarks: relevance on real data, a graded personal benchmark, speed against peers."""
