"""Things the tests, benchmarks and demo build offline: tiny random-weight models, synthetic media."""
