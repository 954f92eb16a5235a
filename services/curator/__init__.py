"""The curator service: assembles trajectories, dedupes, drops environment faults, asks for
review under an admission policy, and writes Parquet dataset snapshots with lineage."""
