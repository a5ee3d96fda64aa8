//! The RTL generator (SPEC.md §4). Not yet implemented: it arrives with the RTL generator issue.
