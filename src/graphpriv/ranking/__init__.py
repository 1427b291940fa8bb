"""Protected-pair differentially private link recommendation (DPLP-rank, De & Chakrabarti, AAAI 2021)."""
