"""Test helpers shipped with the package: tiny graphs and brute-force references."""
