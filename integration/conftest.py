"""Cross-package tests: real broker, real Spark, several codecs together."""
