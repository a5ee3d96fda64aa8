//! Co-simulation (SPEC.md §5). Not yet implemented: it arrives with the co-simulation issue.
